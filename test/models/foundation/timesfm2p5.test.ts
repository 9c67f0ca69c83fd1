import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillMissing, forecastTimesFM25, predictTimesFM25, type TimesFMRunner } from '../../../models/foundation/timesfm2p5.ts';
import { requireInstalled, type TimesFM25Manifest } from '../../../models/foundation/store.ts';
import { ModelInputError, type ForecastTask } from '../../../models/types.ts';
import { Agreement, FIXTURES_DIR, level, readReference, toFloat64, type JsonSeries } from './reference.ts';

interface Reference {
  cases: {
    name: string;
    horizon: number;
    flags: Record<string, boolean>;
    series: { target: JsonSeries }[];
    expected: { point: JsonSeries[]; quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('timesfm-2p5');
const TOLERANCE = 1e-4;

let session: ort.InferenceSession;
let manifest: TimesFM25Manifest;
let run: TimesFMRunner;

beforeAll(async () => {
  const installed = requireInstalled('timesfm-2p5', FIXTURES_DIR);
  manifest = installed.manifest;
  session = await ort.InferenceSession.create(installed.onnxPath);
  run = (feeds) => session.run(feeds);
});
afterAll(async () => session?.release());

/** The series' level after the reference's own filling of missing values (all missing: 0). */
const floorOf = (history: Float64Array) => level(fillMissing(history));

describe('timesfm-2p5 adapter against TimesFM_2p5.forecast (tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, roll-out and horizons past the quantile head', () => {
    const byName = new Map(reference.cases.map((c) => [c.name, c]));
    for (const name of ['missing_values', 'short_histories', 'long_horizon', 'beyond_quantile_head', 'constant']) expect(byName.has(name)).toBe(true);
    expect(byName.get('long_horizon')!.horizon).toBeGreaterThan(2 * manifest.output_patch_len);
    expect(byName.get('beyond_quantile_head')!.horizon).toBeGreaterThan(manifest.output_quantile_len);
    expect(byName.get('beyond_quantile_head')!.flags.use_continuous_quantile_head).toBe(false);
  });

  for (const c of reference.cases) {
    it(`${c.name}: point forecast and the ten output channels within ${TOLERANCE} relative error`, async () => {
      const histories = c.series.map((s) => toFloat64(s.target));
      const forecasts = await predictTimesFM25(run, manifest, histories, c.horizon);
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

  it('refuses covariates rather than dropping them', async () => {
    const task: ForecastTask = { history: Float64Array.of(1, 2, 3), horizon: 2, quantiles: [0.5], seasonLength: 1, covariates: { hist: {}, future: { x: [1, 2, 3, 4, 5] }, static: {} } };
    await expect(forecastTimesFM25(run, manifest, [task])).rejects.toBeInstanceOf(ModelInputError);
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
