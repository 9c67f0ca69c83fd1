import { useState } from 'preact/hooks';
import { ApiError, postForm, postJson } from '../api.ts';
import { CsvError, parseLongCsv, type ParsedSeries } from '../csv.ts';
import { exampleCsv } from '../example.ts';
import { backtestBody, betaQuery, checkWindows, forecastBody, PARQUET_PART, parseQuantiles, type Settings } from '../forecast-input.ts';
import { fromBetaResponse, fromPrediction, type ChartedSeries } from '../results.ts';
import { jobHref } from '../route.ts';
import { readParquetHistory } from '../parquet-history.ts';
import { keepSeriesNames } from '../session.ts';
import { toMillis } from '../time.ts';
import type { BetaResponse, ForecastResponse } from '../types.ts';
import { PlaygroundForm, type FormState } from './PlaygroundForm.tsx';
import { PlaygroundResult } from './PlaygroundResult.tsx';

/** Each CSV series with the forecast made from its end. */
function chartSync(series: ParsedSeries[], response: ForecastResponse): ChartedSeries[] {
  return series.map((s, i) => ({
    name: s.name,
    observed: { x: s.index.map(toMillis), y: s.target },
    forecasts: response.series[i].map((p) => fromPrediction(p, s.index[s.index.length - 1])),
  }));
}

/** An API refusal with each `body.series[i]` path followed by that series' id from the CSV. */
async function naming<T>(series: ParsedSeries[], call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const named = err.errors.map((e) => ({ ...e, path: e.path.replace(/^body\.series\[(\d+)\]/, (at, i: string) => `${at} (${series[Number(i)]?.name})`) }));
    throw new ApiError(err.status, err.code, err.message, named);
  }
}

/**
 * Try the service on your own data: paste or upload a long-format CSV (`unique_id,ds,y`) or a
 * Parquet file, forecast it and see the fan charts, or submit it as a backtest job.
 */
export function Playground() {
  const [csv, setCsv] = useState('');
  const [parquet, setParquet] = useState<File | null>(null);
  const [form, setForm] = useState<FormState>({ model: 'aets', horizon: 14, freq: 'D', quantiles: '0.1, 0.5, 0.9', windows: 3 });
  const [result, setResult] = useState<{ series: ChartedSeries[]; raw: unknown; run: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** Why an uploaded Parquet file's history is not charted (the browser could not read it). */
  const [historyProblem, setHistoryProblem] = useState<string | null>(null);

  const upload = async (file: File | undefined) => {
    if (!file) return;
    setHistoryProblem(null);
    if (/\.parquet$/i.test(file.name)) setParquet(file);
    else {
      setParquet(null);
      setCsv(await file.text());
    }
  };

  /** Runs an action with the settings checked; shows what went wrong, the API's field paths included. */
  const run = async (action: (settings: Settings) => Promise<void>) => {
    const quantiles = parseQuantiles(form.quantiles);
    if (typeof quantiles === 'string') return setError(quantiles);
    setBusy(true);
    setError(null);
    try {
      await action({ ...form, quantiles });
    } catch (err) {
      // fetch rejects with a TypeError when no answer came; anything else went wrong in this page.
      const text = err instanceof TypeError ? `The service did not answer: ${String(err)}` : `The request could not be made: ${String(err)}`;
      setError(err instanceof ApiError ? err.describe() : err instanceof CsvError ? err.message : text);
    } finally {
      setBusy(false);
    }
  };

  const parquetForm = (settings: Settings, backtest: boolean, dataEnd?: number) => {
    const body = new FormData();
    body.append('query', new Blob([JSON.stringify(betaQuery(settings, backtest, dataEnd))], { type: 'application/json' }), 'query.json');
    body.append(PARQUET_PART, parquet!, parquet!.name);
    return body;
  };
  const model = (s: Settings) => `model=${encodeURIComponent(s.model)}`;

  const forecast = async (s: Settings) => {
    if (parquet) {
      const [response, history] = await Promise.all([
        postForm<BetaResponse>(`/v1-beta/forecast?${model(s)}`, parquetForm(s, false)),
        // The chart's history only: a file the browser cannot read is still forecast.
        readParquetHistory(parquet).catch((err: unknown) => String(err)),
      ]);
      const series = fromBetaResponse(response).map((x) => (typeof history === 'string' ? x : { ...x, observed: history.get(x.name) ?? x.observed }));
      setHistoryProblem(typeof history === 'string' ? history : null);
      setResult({ series, raw: response, run: (result?.run ?? 0) + 1 });
    } else {
      const series = parseLongCsv(csv);
      const response = await naming(series, postJson<ForecastResponse>(`/forecast?${model(s)}`, forecastBody(series, s)));
      setResult({ series: chartSync(series, response), raw: response, run: (result?.run ?? 0) + 1 });
    }
  };

  const submitBacktest = async (s: Settings) => {
    const windows = checkWindows(s.windows);
    if (windows) return setError(windows);
    if (parquet) {
      // The cutoffs end one horizon before the file's last time; a file the browser cannot read lets the service count from its end.
      const history = await readParquetHistory(parquet).catch(() => null);
      const ends = history ? [...history.values()].map((points) => points.x[points.x.length - 1]).filter((x) => x !== undefined) : [];
      const dataEnd = ends.length > 0 ? ends.reduce((a, b) => Math.max(a, b)) : undefined;
      const { job_id } = await postForm<{ job_id: string }>(`/v1-beta/forecast-jobs?${model(s)}`, parquetForm(s, true, dataEnd));
      location.hash = jobHref('beta', job_id);
    } else {
      const series = parseLongCsv(csv);
      const { job_id } = await naming(series, postJson<{ job_id: string }>(`/forecast-jobs?${model(s)}`, backtestBody(series, s)));
      keepSeriesNames(
        job_id,
        series.map((x) => x.name),
      );
      location.hash = jobHref('forecast', job_id);
    }
  };

  return (
    <section class="playground">
      <h2>Playground</h2>
      <p class="muted">
        Long format, one row per observation: <code>unique_id,ds,y</code> (the convention of statsforecast, TimeGPT and Chronos). Paste CSV, or upload a CSV or
        Parquet file.
      </p>
      <div class="data">
        <textarea
          name="csv"
          aria-label="Data as CSV: unique_id,ds,y"
          rows={8}
          placeholder={'unique_id,ds,y\nstore_a,2024-01-01,120.5\n…'}
          value={csv}
          disabled={parquet !== null}
          onInput={(e) => setCsv((e.target as HTMLTextAreaElement).value)}
        />
        <div class="controls">
          <input
            name="file"
            type="file"
            aria-label="Upload a CSV or Parquet file"
            accept=".csv,.txt,.parquet"
            onChange={(e) => upload((e.target as HTMLInputElement).files?.[0])}
          />
          {parquet && (
            <span>
              Parquet: <strong>{parquet.name}</strong> (columns unique_id, ds, y; sent to the beta endpoint; its history is read here for the chart
              {historyProblem ? <span class="muted"> and could not be: {historyProblem}</span> : null}){' '}
              <button type="button" class="link" onClick={() => setParquet(null)}>
                use CSV instead
              </button>
            </span>
          )}
          <button type="button" class="link" onClick={() => (setParquet(null), setCsv(exampleCsv()))}>
            Load an example
          </button>
        </div>
      </div>
      <PlaygroundForm state={form} onChange={setForm} />
      <div class="controls">
        <button type="button" name="forecast" disabled={busy} onClick={() => run(forecast)}>
          Forecast
        </button>
        <button type="button" name="backtest" disabled={busy} onClick={() => run(submitBacktest)}>
          Submit backtest job
        </button>
        {busy && <span class="muted">Working…</span>}
      </div>
      {error && (
        <pre class="error" role="alert">
          {error}
        </pre>
      )}
      {result && <PlaygroundResult key={result.run} series={result.series} raw={result.raw} />}
    </section>
  );
}
