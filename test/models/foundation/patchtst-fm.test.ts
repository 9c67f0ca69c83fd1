import { describe, expect, it } from 'vitest';
import { requireHorizonInRange } from '../../../models/families/foundation/horizon-range.ts';
import { forecastPatchTSTFM, forecastSlots, predictPatchTSTFM, quantileMean } from '../../../models/families/foundation/patchtst-fm.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  min_forecast_length: number;
  cases: {
    name: string;
    horizon: number;
    /** The levels recorded (all 99 in `basic`, a subset elsewhere). */
    levels: number[];
    series: { target: JsonSeries }[];
    expected: { mean: JsonSeries[]; quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('patchtst-fm');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('patchtst-fm');
const byName = new Map(reference.cases.map((c) => [c.name, c]));

describe('patchtst-fm adapter against PatchTSTFMForPrediction.forward (granite-tsfm 0.3.11; tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short and cut histories, the longest horizon and a batch', () => {
    for (const name of [
      'basic',
      'missing_values',
      'short_histories',
      'almost_padding_patch',
      'long_history',
      'long_horizon',
      'longest_horizon',
      'batch_of_40',
    ]) {
      expect(byName.has(name)).toBe(true);
    }
    // Windows whose first patch holds one value after 15 padding steps: masked as padding (> 90%).
    const almost = byName.get('almost_padding_patch')!;
    const slots = forecastSlots(manifest, almost.horizon);
    expect(manifest.patch_size).toBe(16);
    for (const s of almost.series) expect((s.target.length + slots) % manifest.patch_size).toBe(1);
    expect(reference.min_forecast_length).toBe(manifest.min_forecast_length);
    // A horizon under the minimum pass, and one whose pass cuts the history to fit the window.
    expect(byName.get('basic')!.horizon).toBeLessThan(manifest.min_forecast_length);
    const long = byName.get('long_horizon')!;
    expect(Math.max(...long.series.map((s) => s.target.length)) + long.horizon).toBeGreaterThan(manifest.context_length);
    expect(byName.get('longest_horizon')!.horizon).toBe(manifest.context_length - 1);
    expect(byName.get('missing_values')!.series.some((s) => s.target[0] === null)).toBe(true);
    expect(byName.get('basic')!.levels).toEqual(manifest.quantile_levels);
  });

  for (const c of reference.cases) {
    it(`${c.name}: mean and quantiles within ${TOLERANCE} relative error`, async () => {
      const histories = c.series.map((s) => toFloat64(s.target));
      const forecasts = await predictPatchTSTFM(run, manifest, histories, c.horizon);
      const recorded = c.levels.map((q) => manifest.quantile_levels.indexOf(q));
      expect(recorded.every((k) => k >= 0)).toBe(true);
      const agreement = new Agreement();
      forecasts.forEach((f, i) => {
        const floor = level(histories[i]);
        agreement.add(f.mean, c.expected.mean[i], `series ${i} mean`, floor);
        recorded.forEach((k, j) => agreement.add(f.quantiles[k], c.expected.quantiles[i][j], `series ${i} level ${c.levels[j]}`, floor));
      });
      console.log(`patchtst-fm ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('forecasts a series alike alone and in a batch, and maps the model levels to the requested ones', async () => {
    const c = byName.get('batch_of_40')!;
    const tasks: ForecastTask[] = c.series.map((s) => ({ history: toFloat64(s.target), horizon: c.horizon, quantiles: [0.1, 0.5, 0.9], seasonLength: 1 }));
    const together = await forecastPatchTSTFM(run, manifest, tasks);
    const [alone] = await forecastPatchTSTFM(run, manifest, [tasks[7]]);
    const agreement = new Agreement();
    agreement.add(alone.mean, Array.from(together[7].mean), 'mean', level(tasks[7].history));
    together[7].quantiles.forEach((q, j) => agreement.add(alone.quantiles[j], Array.from(q), `quantile ${j}`, level(tasks[7].history)));
    expect(agreement.worst, agreement.where).toBeLessThan(1e-5);
    // 0.1, 0.5 and 0.9 are model levels: the mapping returns them as they are.
    const [direct] = await predictPatchTSTFM(run, manifest, [tasks[7].history], c.horizon);
    [0.1, 0.5, 0.9].forEach((q, j) => expect(Array.from(alone.quantiles[j])).toEqual(Array.from(direct.quantiles[manifest.quantile_levels.indexOf(q)])));
    const [low, mid, high] = alone.quantiles;
    for (let t = 0; t < c.horizon; t++) expect(low[t] <= mid[t] && mid[t] <= high[t]).toBe(true);
  });

  it('groups tasks by horizon and keeps their order', async () => {
    const [a, b] = byName.get('basic')!.series.map((s) => toFloat64(s.target));
    const tasks: ForecastTask[] = [
      { history: a, horizon: 12, quantiles: [0.5], seasonLength: 1 },
      { history: b, horizon: 40, quantiles: [0.5], seasonLength: 1 },
      { history: b, horizon: 12, quantiles: [0.5], seasonLength: 1 },
    ];
    const out = await forecastPatchTSTFM(run, manifest, tasks);
    expect(out.map((o) => o.mean.length)).toEqual([12, 40, 12]);
    const [first, third] = await predictPatchTSTFM(run, manifest, [a, b], 12);
    expect(Array.from(out[0].mean)).toEqual(Array.from(first.mean));
    expect(Array.from(out[2].mean)).toEqual(Array.from(third.mean));
  });

  it('computes the mean as the reference integrates the quantile function', () => {
    // The uniform distribution on [0, 1] (q(p) = p) at levels symmetric about 0.5: trapezoids
    // give (l_n^2 - l_1^2) / 2, the tails l_1^2 + l_n (1 - l_n), together exactly 1/2.
    const levels = manifest.quantile_levels;
    expect(levels[0] + levels.at(-1)!).toBeCloseTo(1, 12);
    expect(quantileMean(levels, levels)).toBeCloseTo(0.5, 12);
    expect(quantileMean([0.25, 0.75], [2, 2])).toBe(2);
  });

  it('refuses a horizon without history in the window, naming the horizon and its limit, and a window without observations', async () => {
    expect(forecastSlots(manifest, 3)).toBe(manifest.min_forecast_length);
    expect(() => requireHorizonInRange('patchtst-fm', manifest, manifest.context_length - 1)).not.toThrow();
    const history = toFloat64(byName.get('basic')!.series[0].target);
    for (const horizon of [manifest.context_length, manifest.context_length + 50]) {
      const refused = predictPatchTSTFM(run, manifest, [history], horizon);
      await expect(refused).rejects.toBeInstanceOf(ModelInputError);
      await expect(refused).rejects.toThrow(`horizon ${horizon} is out of range for patchtst-fm: it forecasts at most ${manifest.context_length - 1} steps`);
    }
    // Observed values, then 50 missing: a horizon that keeps only the last 36 sees none of them.
    const gap = Float64Array.from({ length: 300 }, (_, i) => (i < 250 ? 10 + (i % 5) : NaN));
    await expect(predictPatchTSTFM(run, manifest, [gap], manifest.context_length - 36)).rejects.toThrow('at least one observed value in the last 36 values');
    await expect(predictPatchTSTFM(run, manifest, [gap], manifest.context_length - 60)).resolves.toHaveLength(1);
  });

  it('refuses covariates rather than dropping them', async () => {
    const task: ForecastTask = {
      history: Float64Array.of(1, 2, 3),
      horizon: 2,
      quantiles: [0.5],
      seasonLength: 1,
      covariates: { hist: { x: [1, 2, 3] }, future: {}, static: {} },
    };
    await expect(forecastPatchTSTFM(run, manifest, [task])).rejects.toBeInstanceOf(ModelInputError);
  });
});
