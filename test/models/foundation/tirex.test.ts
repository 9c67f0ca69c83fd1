import { describe, expect, it } from 'vitest';
import { forecastTiRex, predictTiRex, rolloutSteps, rolloutWindow } from '../../../models/families/foundation/tirex.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  cases: {
    name: string;
    horizon: number;
    series: { target: JsonSeries }[];
    /** The reference's `mean` output (its 0.5 level) and its 9 levels, [series][level][step]. */
    expected: { median: JsonSeries[]; quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('tirex');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('tirex');
const byName = new Map(reference.cases.map((c) => [c.name, c]));

describe('tirex adapter against TiRexZero.forecast (tirex-ts 1.4.2, torch backend on the CPU; tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short and cut histories, the roll-out past the context and a batch', () => {
    for (const name of ['basic', 'missing_values', 'short_histories', 'long_history', 'long_horizon', 'horizon_past_context', 'batch_of_40'])
      expect(byName.has(name)).toBe(true);
    expect(byName.get('basic')!.horizon).toBe(manifest.patch_size); // one network call
    expect(rolloutSteps(manifest, byName.get('long_horizon')!.horizon)).toBeGreaterThan(5);
    expect(byName.get('horizon_past_context')!.horizon).toBeGreaterThan(manifest.context_length);
    expect(Math.min(...byName.get('long_history')!.series.map((s) => s.target.length))).toBeGreaterThan(manifest.context_length);
    const missing = byName.get('missing_values')!.series;
    expect(missing.some((s) => s.target[0] === null) && missing.some((s) => s.target.at(-1) === null)).toBe(true);
    expect(Math.min(...byName.get('short_histories')!.series.map((s) => s.target.length))).toBe(1);
    expect(byName.get('batch_of_40')!.series).toHaveLength(40);
  });

  for (const c of reference.cases) {
    it(`${c.name}: median and the 9 quantile levels within ${TOLERANCE} relative error`, async () => {
      const histories = c.series.map((s) => toFloat64(s.target));
      const forecasts = await predictTiRex(
        run,
        manifest,
        histories,
        histories.map(() => c.horizon),
      );
      const agreement = new Agreement();
      forecasts.forEach((f, i) => {
        const floor = level(histories[i]);
        agreement.add(f.median, c.expected.median[i], `series ${i} median`, floor);
        manifest.quantile_levels.forEach((q, k) => agreement.add(f.quantiles[k], c.expected.quantiles[i][k], `series ${i} level ${q}`, floor));
      });
      console.log(`tirex ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('builds the roll-out windows as the reference: the history then NaN patches, cut or NaN-padded to the context', () => {
    const C = manifest.context_length;
    const P = manifest.patch_size;
    const short = Float64Array.of(1, 2, 3);
    const first = rolloutWindow(manifest, short, 0);
    expect(Array.from(first.subarray(C - 3))).toEqual([1, 2, 3]);
    expect(first.subarray(0, C - 3).every(Number.isNaN)).toBe(true);
    const second = rolloutWindow(manifest, short, 2);
    expect(Array.from(second.subarray(C - 2 * P - 3, C - 2 * P))).toEqual([1, 2, 3]);
    expect(second.subarray(C - 2 * P).every(Number.isNaN)).toBe(true);
    const long = Float64Array.from({ length: C + 50 }, (_, i) => i);
    const cut = rolloutWindow(manifest, long, 1);
    expect(cut[0]).toBe(50 + P);
    expect(cut[C - P - 1]).toBe(C + 49);
    expect(rolloutWindow(manifest, long, Math.ceil(C / P)).every(Number.isNaN)).toBe(true);
  });

  it('forecasts a series alike alone and in a batch of other horizons, and maps the model levels to the requested ones', async () => {
    const c = byName.get('batch_of_40')!;
    const tasks: ForecastTask[] = c.series.map((s, i) => ({
      history: toFloat64(s.target),
      horizon: i === 7 ? c.horizon : 5 + i,
      quantiles: [0.1, 0.5, 0.9],
      seasonLength: 1,
    }));
    const together = await forecastTiRex(run, manifest, tasks);
    expect(together.map((o) => o.mean.length)).toEqual(tasks.map((t) => t.horizon));
    const [alone] = await forecastTiRex(run, manifest, [tasks[7]]);
    const agreement = new Agreement();
    agreement.add(alone.mean, Array.from(together[7].mean), 'median', level(tasks[7].history));
    together[7].quantiles.forEach((q, j) => agreement.add(alone.quantiles[j], Array.from(q), `quantile ${j}`, level(tasks[7].history)));
    expect(agreement.worst, agreement.where).toBeLessThan(1e-5);
    // 0.1, 0.5 and 0.9 are model levels: the mapping returns them as they are; the point is the 0.5 level.
    const [direct] = await predictTiRex(run, manifest, [tasks[7].history], [c.horizon]);
    [0.1, 0.5, 0.9].forEach((q, j) => expect(Array.from(alone.quantiles[j])).toEqual(Array.from(direct.quantiles[manifest.quantile_levels.indexOf(q)])));
    expect(Array.from(alone.mean)).toEqual(Array.from(alone.quantiles[1]));
    // A level between the model's is interpolated between its neighbours.
    const [between] = await forecastTiRex(run, manifest, [{ ...tasks[7], quantiles: [0.25] }]);
    const [q2, q3] = [direct.quantiles[1], direct.quantiles[2]];
    for (let t = 0; t < c.horizon; t++) expect(between.quantiles[0][t]).toBeCloseTo((q2[t] + q3[t]) / 2, 6);
  });

  it('refuses covariates rather than dropping them, and a horizon that is not a positive integer', async () => {
    const task: ForecastTask = {
      history: Float64Array.of(1, 2, 3),
      horizon: 2,
      quantiles: [0.5],
      seasonLength: 1,
      covariates: { hist: { x: [1, 2, 3] }, future: {}, static: {} },
    };
    await expect(forecastTiRex(run, manifest, [task])).rejects.toBeInstanceOf(ModelInputError);
    await expect(predictTiRex(run, manifest, [task.history], [0])).rejects.toThrow('horizon 0 is out of range for tirex');
  });
});
