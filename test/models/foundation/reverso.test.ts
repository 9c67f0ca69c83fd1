import { describe, expect, it } from 'vitest';
import { requireHorizonInRange } from '../../../models/families/foundation/horizon-range.ts';
import { forecastReverso, interp, predictReverso, prepareWindow, unitLinspace } from '../../../models/families/foundation/reverso.ts';
import type { ReversoManifest } from '../../../models/families/foundation/model-store.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  cases: {
    name: string;
    horizon: number;
    flip_invariance: boolean;
    downsample_factor: number;
    series: { target: JsonSeries }[];
    expected: JsonSeries[];
  }[];
}

const reference = readReference<Reference>('reverso');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('reverso');
const byName = new Map(reference.cases.map((c) => [c.name, c]));
const withOptions = (flip: boolean, downsample: number): ReversoManifest => ({
  ...manifest,
  forecast_config: { flip_invariance: flip, downsample_factor: downsample },
});

describe('reverso adapter against ReversoPredictor.predict (shinfxh/reverso 6904526; tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short and long histories, roll-outs, both flip settings, downsampling and a batch', () => {
    for (const name of [
      'basic',
      'missing_values',
      'short_histories',
      'long_horizon',
      'no_flip_invariance',
      'downsampled',
      'downsampled_long_horizon',
      'batch_of_40',
    ]) {
      expect(byName.has(name)).toBe(true);
    }
    const L = manifest.context_length;
    expect(manifest.forecast_config).toEqual({ flip_invariance: true, downsample_factor: 1 });
    // Histories longer than the window, and shorter ones (left-padded).
    expect(byName.get('basic')!.series.map((s) => s.target.length)).toEqual([300, L, 100]);
    expect(Math.min(...byName.get('short_histories')!.series.map((s) => s.target.length))).toBe(1);
    // A first value missing (a NaN padding), one observed value, none.
    const missing = byName.get('missing_values')!.series.map((s) => s.target);
    expect(missing.some((t) => t[0] === null)).toBe(true);
    expect(missing.some((t) => t.filter((v) => v !== null).length === 1)).toBe(true);
    expect(missing.some((t) => t.every((v) => v === null))).toBe(true);
    // Roll-outs past one 48-step call, downsampled histories longer than the window.
    expect(byName.get('long_horizon')!.horizon).toBeGreaterThan(3 * manifest.output_patch_size);
    const down = byName.get('downsampled')!;
    expect(down.downsample_factor).toBeGreaterThan(1);
    expect(Math.max(...down.series.map((s) => s.target.length)) / down.downsample_factor).toBeGreaterThan(L);
    expect(byName.get('downsampled_long_horizon')!.horizon / byName.get('downsampled_long_horizon')!.downsample_factor).toBeGreaterThan(
      2 * manifest.output_patch_size,
    );
    expect(byName.get('no_flip_invariance')!.flip_invariance).toBe(false);
  });

  for (const c of reference.cases) {
    it(`${c.name}: point forecast within ${TOLERANCE} relative error`, async () => {
      const histories = c.series.map((s) => toFloat64(s.target));
      const forecasts = await predictReverso(run, withOptions(c.flip_invariance, c.downsample_factor), histories, c.horizon);
      const agreement = new Agreement();
      // The series' level, or 1e-6 for one without observations (its forecast is 0).
      forecasts.forEach((f, i) => agreement.add(f, c.expected[i], `series ${i}`, Math.max(level(histories[i]), 1e-6)));
      console.log(`reverso ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('forecasts a series alike alone and in a batch; every quantile and the mean are the point', async () => {
    const c = byName.get('batch_of_40')!;
    const tasks: ForecastTask[] = c.series.map((s) => ({ history: toFloat64(s.target), horizon: c.horizon, quantiles: [0.1, 0.5, 0.9], seasonLength: 1 }));
    const together = await forecastReverso(run, manifest, tasks);
    const [alone] = await forecastReverso(run, manifest, [tasks[7]]);
    expect(Array.from(alone.mean)).toEqual(Array.from(together[7].mean));
    for (const q of alone.quantiles) expect(Array.from(q)).toEqual(Array.from(alone.mean));
  });

  it('groups tasks by horizon and keeps their order', async () => {
    const [a, b] = byName.get('basic')!.series.map((s) => toFloat64(s.target));
    const tasks: ForecastTask[] = [
      { history: a, horizon: 12, quantiles: [0.5], seasonLength: 1 },
      { history: b, horizon: 100, quantiles: [0.5], seasonLength: 1 },
      { history: b, horizon: 12, quantiles: [0.5], seasonLength: 1 },
    ];
    const out = await forecastReverso(run, manifest, tasks);
    expect(out.map((o) => o.mean.length)).toEqual([12, 100, 12]);
    const [first, third] = await predictReverso(run, manifest, [a, b], 12);
    expect(Array.from(out[0].mean)).toEqual(Array.from(first));
    expect(Array.from(out[2].mean)).toEqual(Array.from(third));
  });

  it('prepares windows as the reference: subsampling, left padding with the first value, interpolation', () => {
    const nan = NaN;
    // Every 2nd value from the first, the last 4 kept.
    expect(Array.from(prepareWindow(Float64Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 4, 2))).toEqual([5, 7, 9, 11]);
    // Padded with the first value, interpolated inside, flat beyond the observed ends.
    expect(Array.from(prepareWindow(Float64Array.of(nan, 2, nan, 6, nan), 7, 1))).toEqual([2, 2, 2, 2, 4, 6, 6]);
    expect(Array.from(prepareWindow(Float64Array.of(nan, 5, nan), 4, 1))).toEqual([5, 5, 5, 5]);
    expect(Array.from(prepareWindow(Float64Array.of(nan, nan), 3, 1))).toEqual([0, 0, 0]);
    expect(Array.from(prepareWindow(new Float64Array(0), 2, 1))).toEqual([0, 0]);
    // numpy's interp and linspace.
    expect(Array.from(interp([-1, 0, 0.5, 1, 2], [0, 1], [10, 20]))).toEqual([10, 10, 15, 20, 20]);
    expect(Array.from(unitLinspace(3))).toEqual([0, 0.5, 1]);
    expect(Array.from(unitLinspace(1))).toEqual([0]);
  });

  it('refuses a horizon below the downsample factor, and covariates', async () => {
    expect(() => requireHorizonInRange('reverso', withOptions(true, 3), 3)).not.toThrow();
    const history = toFloat64(byName.get('basic')!.series[0].target);
    const refused = predictReverso(run, withOptions(true, 3), [history], 2);
    await expect(refused).rejects.toBeInstanceOf(ModelInputError);
    await expect(refused).rejects.toThrow('horizon 2 is out of range for reverso: it forecasts at least 3 steps');
    const task: ForecastTask = {
      history: Float64Array.of(1, 2, 3),
      horizon: 2,
      quantiles: [0.5],
      seasonLength: 1,
      covariates: { hist: { x: [1, 2, 3] }, future: {}, static: {} },
    };
    await expect(forecastReverso(run, manifest, [task])).rejects.toBeInstanceOf(ModelInputError);
  });
});
