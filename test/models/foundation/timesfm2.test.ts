import { describe, expect, it } from 'vitest';
import { forecastTimesFM2, frequencyClass, predictTimesFM2, predictTimesFM2WithCovariates } from '../../../models/families/foundation/timesfm2.ts';
import { fillMissing } from '../../../models/families/foundation/timesfm2p5.ts';
import { ModelInputError, type ForecastTask, type TaskCovariates } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  cases: {
    name: string;
    horizon: number;
    freq: number[];
    /** Set for forecast_with_covariates cases, which give the point forecast only. */
    xreg?: { mode: string };
    series: { target: JsonSeries; future?: Record<string, JsonSeries> }[];
    expected: { point: JsonSeries[]; quantiles?: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('timesfm-2');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('timesfm-2');

describe('timesfm-2 adapter against TimesFmTorch.forecast (timesfm 1.3; tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, roll-out and every frequency class', () => {
    const byName = new Map(reference.cases.map((c) => [c.name, c]));
    for (const name of ['missing_values', 'short_histories', 'long_horizon', 'batch_of_30', 'xreg', 'xreg_long_horizon']) expect(byName.has(name)).toBe(true);
    expect(byName.get('long_horizon')!.horizon).toBeGreaterThan(2 * manifest.output_patch_len);
    expect(new Set(reference.cases.flatMap((c) => c.freq))).toEqual(new Set([0, 1, 2]));
  });

  for (const c of reference.cases) {
    it(`${c.name}: point forecast and the ten output channels within ${TOLERANCE} relative error`, async () => {
      const histories = c.series.map((s) => toFloat64(s.target));
      const forecasts = c.xreg
        ? await predictTimesFM2WithCovariates(
            run,
            manifest,
            c.series.map((s, i) => ({
              target: histories[i],
              future: Object.fromEntries(Object.entries(s.future!).map(([k, v]) => [k, toFloat64(v)])),
              frequencyClass: c.freq[i],
            })),
            c.horizon,
          )
        : await predictTimesFM2(
            run,
            manifest,
            histories.map((history, i) => ({ history, frequencyClass: c.freq[i] })),
            c.horizon,
          );
      const agreement = new Agreement();
      forecasts.forEach((f, i) => {
        const floor = level(fillMissing(histories[i]));
        agreement.add(f.point, c.expected.point[i], `series ${i} point`, floor);
        f.channels.forEach((values, ch) => c.expected.quantiles && agreement.add(values, c.expected.quantiles[i][ch], `series ${i} channel ${ch}`, floor));
      });
      console.log(`timesfm-2 ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('maps the request frequency to the reference classes and forecasts a series alike alone and in a batch', async () => {
    expect(['H', 'D', 'W', 'M', 'Q', 'Y', undefined].map(frequencyClass)).toEqual([0, 0, 1, 1, 1, 2, 0]);
    const c = reference.cases.find((x) => x.name === 'basic')!;
    const tasks: ForecastTask[] = c.series.map((s) => ({
      history: toFloat64(s.target),
      horizon: c.horizon,
      quantiles: [0.1, 0.5, 0.9],
      seasonLength: 1,
      freq: 'W',
    }));
    const together = await forecastTimesFM2(run, manifest, tasks);
    const [alone] = await forecastTimesFM2(run, manifest, [tasks[2]]);
    const agreement = new Agreement();
    agreement.add(alone.mean, Array.from(together[2].mean), 'mean', level(tasks[2].history));
    expect(agreement.worst).toBeLessThan(1e-5);
    // The point forecast is the median channel; the requested levels come out ordered even where
    // the tiny random model's deciles cross (the monotone mapping of quantiles.ts).
    const [weekly] = await predictTimesFM2(run, manifest, [{ history: tasks[2].history, frequencyClass: 1 }], c.horizon);
    expect(Array.from(together[2].mean)).toEqual(Array.from(weekly.point));
    expect(Array.from(weekly.point)).toEqual(Array.from(weekly.channels[5]));
    const [low, mid, high] = together[2].quantiles;
    for (let t = 0; t < c.horizon; t++) expect(low[t] <= mid[t] && mid[t] <= high[t]).toBe(true);
  });

  it('takes known-future covariates through the regression and refuses historical and static ones rather than dropping them', async () => {
    const c = reference.cases.find((x) => x.name === 'xreg')!;
    const tasks: ForecastTask[] = c.series.map((s) => ({
      history: toFloat64(s.target),
      horizon: c.horizon,
      quantiles: [0.1, 0.5, 0.9],
      seasonLength: 1,
      freq: 'H',
      covariates: { hist: {}, future: Object.fromEntries(Object.entries(s.future!).map(([k, v]) => [k, Array.from(toFloat64(v))])), static: {} },
    }));
    const outputs = await forecastTimesFM2(run, manifest, tasks);
    const agreement = new Agreement();
    outputs.forEach((o, i) => agreement.add(o.mean, c.expected.point[i], `series ${i} mean`, level(tasks[i].history)));
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    const plain: ForecastTask = { history: Float64Array.of(1, 2, 3), horizon: 2, quantiles: [0.5], seasonLength: 1 };
    const refused: TaskCovariates[] = [
      { hist: { x: [1, 2, 3] }, future: {}, static: {} },
      { hist: {}, future: {}, static: { size: 3 } },
    ];
    for (const covariates of refused) {
      await expect(forecastTimesFM2(run, manifest, [{ ...plain, covariates }])).rejects.toBeInstanceOf(ModelInputError);
    }
  });
});
