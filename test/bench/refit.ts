/**
 * `npm run bench -- refit [--dataset weekly|hourly] [--series N] [--fcds 20] [--every 5] [--model theta] [--threads 1]`
 *
 * One backtest per M4 series (train then test, K creation dates spaced one horizon apart, the
 * last at the end of train) run through the engine twice in the same process: refitting the
 * model at every date (the default), then with `refit: n` (a fit at every n-th date, the dates
 * between keeping it). Prints both times, the speed-up, and the accuracy of both over the steps
 * whose actuals are known (mean MAE scaled by the series' in-sample naive MAE, i.e. MASE with
 * lag 1, and mean CRPS of the 19 grid quantiles), so the accuracy given up is in view.
 */
import { loadConfig } from '../../config.ts';
import { loadM4, type M4Name } from '../../datasets/m4.ts';
import { Engine } from '../../engine/engine.ts';
import { computePredictions } from '../../engine/forecast.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { QUANTILE_GRID } from './accuracy/scoring.ts';
import { benchOptions } from './options.ts';

const USAGE = 'usage: npm run bench -- refit [--dataset weekly|hourly] [--series N] [--fcds 20] [--every 5] [--model theta] [--threads 1]';
const FREQ = { weekly: 'W', hourly: 'H' } as const;

async function buildRequest(dataset: M4Name, count: number, fcds: number, refit: number | 'every') {
  const all = await loadM4(dataset);
  const horizon = all[0].horizon;
  const step = dataset === 'weekly' ? 7 * 86_400_000 : 3_600_000;
  const series = all
    .filter((s) => s.train.length > horizon * (fcds + 2))
    .slice(0, count)
    .map((s) => {
      const target = [...s.train, ...s.test];
      const index = target.map((_, t) => new Date(Date.UTC(2000, 0, 3) + t * step).toISOString().slice(0, 19));
      const dates = Array.from({ length: fcds }, (_, k) => s.train.length - horizon * (fcds - 1 - k));
      return { target, index, fcds: dates, naiveScale: naiveMae(s.train) };
    });
  if (series.length === 0) throw new Error(`no M4 ${dataset} series has more than ${horizon * (fcds + 2)} training values: ask for fewer --fcds`);
  const request = ForecastRequest.parse({
    series: series.map(({ target, index, fcds: dates }) => ({ target, index, fcds: dates })),
    horizon,
    freq: FREQ[dataset as keyof typeof FREQ],
    quantiles: QUANTILE_GRID,
    refit,
  });
  return { request, scales: series.map((s) => s.naiveScale) };
}

function naiveMae(y: Float64Array): number {
  let sum = 0;
  for (let t = 1; t < y.length; t++) sum += Math.abs(y[t] - y[t - 1]);
  return sum / (y.length - 1);
}

async function run1(engine: Engine, dataset: M4Name, count: number, fcds: number, refit: number | 'every', model: string) {
  const { request, scales } = await buildRequest(dataset, count, fcds, refit);
  const started = performance.now();
  const rows = await computePredictions(engine, request, model, 'background');
  const seconds = (performance.now() - started) / 1000;
  let mase = 0;
  let crps = 0;
  let scored = 0;
  let refitted = 0;
  for (const { planned, prediction } of rows) {
    if (prediction.refitted !== false) refitted++;
    if (!prediction.metrics) continue;
    mase += prediction.metrics.mae! / scales[planned.seriesIndex];
    crps += prediction.metrics.crps! / scales[planned.seriesIndex];
    scored++;
  }
  return { seconds, forecasts: rows.length, refitted, mase: mase / scored, crps: crps / scored, series: request.series.length };
}

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      dataset: { type: 'string', default: 'weekly' },
      series: { type: 'string', default: '100' },
      fcds: { type: 'string', default: '20' },
      every: { type: 'string', default: '5' },
      model: { type: 'string', default: 'theta' },
      threads: { type: 'string', default: '1' },
    },
    USAGE,
  );
  if (!values) return;
  const [count, fcds, every, threads] = [values.series, values.fcds, values.every, values.threads].map(Number);
  if (![count, fcds, every, threads].every((n) => Number.isInteger(n) && n >= 1) || !(values.dataset in FREQ)) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  const dataset = values.dataset as M4Name;
  const engine = new Engine(loadConfig({ ...process.env, MODEL_THREADS: String(threads) }).engine);
  try {
    const full = await run1(engine, dataset, count, fcds, 'every', values.model);
    const kept = await run1(engine, dataset, count, fcds, every, values.model);
    console.log(`refit: M4 ${dataset}, ${full.series} series x ${fcds} creation dates, model ${values.model}, ${threads} model thread(s)`);
    const line = (label: string, r: typeof full) =>
      `${label.padEnd(16)} ${r.seconds.toFixed(2).padStart(8)} s  ${String(r.refitted).padStart(6)} of ${r.forecasts} refitted  MASE(lag 1) ${r.mase.toFixed(4)}  scaled CRPS ${r.crps.toFixed(4)}`;
    console.log(line('refit every date', full));
    console.log(line(`refit every ${every}`, kept));
    const speedUp = full.seconds / kept.seconds;
    console.log(
      `speed-up ${speedUp.toFixed(2)}x (target >= 3x ${speedUp >= 3 ? 'PASS' : 'FAIL'}); accuracy given up: MASE ${(((kept.mase - full.mase) / full.mase) * 100).toFixed(2)}%, CRPS ${(((kept.crps - full.crps) / full.crps) * 100).toFixed(2)}%`,
    );
  } finally {
    await engine.close();
  }
}
