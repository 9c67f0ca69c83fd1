import { describe, expect, it } from 'vitest';
import { fillMissing, forecastTimesFM25, predictTimesFM25, predictTimesFM25WithCovariates } from '../../../models/families/foundation/timesfm2p5.ts';
import { ModelInputError, type CovariateValue, type ForecastTask, type TaskCovariates } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  cases: {
    name: string;
    horizon: number;
    flags: Record<string, boolean>;
    /** Set for forecast_with_covariates cases. */
    xreg?: { mode: string; normalize_xreg_target_per_input: boolean; ridge: number };
    /** Known-future covariates: numbers, or categories as text. */
    series: { target: JsonSeries; future?: Record<string, JsonSeries | string[]> }[];
    expected: { point: JsonSeries[]; quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('timesfm-2p5');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('timesfm-2p5');

/** A case's covariates as tasks carry them: numbers (null as NaN) or categories as text. */
const covariateValues = (future: Record<string, JsonSeries | string[]>): Record<string, CovariateValue[]> =>
  Object.fromEntries(Object.entries(future).map(([k, v]) => [k, v.map((x) => (x === null ? NaN : x))]));

/** The series' level after the reference's own filling of missing values (all missing: 0). */
const floorOf = (history: Float64Array) => level(fillMissing(history));

describe('timesfm-2p5 adapter against TimesFM_2p5.forecast (tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, roll-out and horizons past the quantile head', () => {
    const byName = new Map(reference.cases.map((c) => [c.name, c]));
    for (const name of [
      'missing_values',
      'short_histories',
      'long_horizon',
      'beyond_quantile_head',
      'constant',
      'xreg',
      'xreg_long_horizon',
      'xreg_categorical',
    ])
      expect(byName.has(name)).toBe(true);
    expect(byName.get('long_horizon')!.horizon).toBeGreaterThan(2 * manifest.output_patch_len);
    expect(byName.get('beyond_quantile_head')!.horizon).toBeGreaterThan(manifest.output_quantile_len);
    expect(byName.get('beyond_quantile_head')!.flags.use_continuous_quantile_head).toBe(false);
  });

  for (const c of reference.cases) {
    it(`${c.name}: point forecast and the ten output channels within ${TOLERANCE} relative error`, async () => {
      const histories = c.series.map((s) => toFloat64(s.target));
      const forecasts = c.xreg
        ? await predictTimesFM25WithCovariates(
            run,
            manifest,
            c.series.map((s, i) => ({ target: histories[i], future: covariateValues(s.future!) })),
            c.horizon,
          )
        : await predictTimesFM25(run, manifest, histories, c.horizon);
      const agreement = new Agreement();
      forecasts.forEach((f, i) => {
        const floor = floorOf(histories[i]);
        agreement.add(f.point, c.expected.point[i], `series ${i} point`, floor);
        f.channels.forEach((values, ch) => agreement.add(values, c.expected.quantiles[i][ch], `series ${i} channel ${ch}`, floor));
      });
      console.log(`timesfm-2p5 ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('answers requested deciles with the reference channels and the mean with its point forecast', async () => {
    const c = reference.cases.find((x) => x.name === 'basic')!;
    const tasks: ForecastTask[] = c.series.map((s) => ({ history: toFloat64(s.target), horizon: c.horizon, quantiles: [0.1, 0.9, 0.4, 0.5], seasonLength: 1 }));
    const out = await forecastTimesFM25(run, manifest, tasks);
    const agreement = new Agreement();
    out.forEach((o, i) => {
      const floor = floorOf(tasks[i].history);
      agreement.add(o.mean, c.expected.point[i], 'mean', floor);
      [1, 9, 4, 5].forEach((ch, k) => agreement.add(o.quantiles[k], c.expected.quantiles[i][ch], `level ${tasks[i].quantiles[k]}`, floor));
    });
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
  });

  it('gives a series the same forecast alone as in a batch of longer and shorter ones', async () => {
    const c = reference.cases.find((x) => x.name === 'batch_of_40')!;
    const histories = c.series.map((s) => toFloat64(s.target));
    const shortest = histories.reduce((best, h, i) => (h.length < histories[best].length ? i : best), 0);
    const [alone] = await predictTimesFM25(run, manifest, [histories[shortest]], c.horizon);
    const agreement = new Agreement();
    agreement.add(alone.point, c.expected.point[shortest], 'point', floorOf(histories[shortest]));
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
  });

  it('takes known-future covariates through the regression, per creation time, and refuses historical and static ones rather than dropping them', async () => {
    const c = reference.cases.find((x) => x.name === 'xreg')!;
    const HOUR = 3_600_000;
    const tasks: ForecastTask[] = c.series.map((s) => {
      const history = toFloat64(s.target);
      return {
        history,
        horizon: c.horizon,
        quantiles: [0.1, 0.5, 0.9],
        seasonLength: 1,
        // Every series ends at the same hour: one fit over all of them, as in the reference case.
        times: Float64Array.from({ length: history.length + c.horizon }, (_, t) => (t - history.length + 1) * HOUR),
        covariates: { hist: {}, future: covariateValues(s.future!), static: {} },
      };
    });
    const outputs = await forecastTimesFM25(run, manifest, tasks);
    const agreement = new Agreement();
    outputs.forEach((o, i) => {
      agreement.add(o.mean, c.expected.point[i], `series ${i} mean`, level(tasks[i].history));
      [1, 5, 9].forEach((channel, k) =>
        agreement.add(o.quantiles[k], c.expected.quantiles[i][channel], `series ${i} level ${tasks[i].quantiles[k]}`, level(tasks[i].history)),
      );
    });
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);

    // A task created at another time is fitted on its own: the others' later values never reach it.
    const shifted = { ...tasks[0], times: tasks[0].times!.map((t) => t - 24 * HOUR) };
    const [alone] = await forecastTimesFM25(run, manifest, [shifted]);
    const [withOthers] = await forecastTimesFM25(run, manifest, [shifted, ...tasks.slice(1)]);
    expect(Array.from(withOthers.mean)).toEqual(Array.from(alone.mean));
    expect(Array.from(alone.mean)).not.toEqual(Array.from(outputs[0].mean));

    const plain: ForecastTask = { history: Float64Array.of(1, 2, 3), horizon: 2, quantiles: [0.5], seasonLength: 1 };
    const refused: TaskCovariates[] = [
      { hist: { x: [1, 2, 3] }, future: {}, static: {} },
      { hist: {}, future: {}, static: { size: 3 } },
    ];
    for (const covariates of refused) {
      await expect(forecastTimesFM25(run, manifest, [{ ...plain, covariates }])).rejects.toBeInstanceOf(ModelInputError);
    }
  });
});

describe('fillMissing (strip_leading_nans + linear_interpolation)', () => {
  it('drops leading gaps, interpolates inner ones and holds the last value at the end', () => {
    expect(Array.from(fillMissing(Float64Array.of(NaN, NaN, 1, NaN, 3, NaN)))).toEqual([1, 2, 3, 3]);
  });
  it('gives zeros for a series with no observation, as the reference does', () => {
    expect(Array.from(fillMissing(Float64Array.of(NaN, NaN)))).toEqual([0, 0]);
  });
});
