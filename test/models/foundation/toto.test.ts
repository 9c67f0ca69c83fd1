import { describe, expect, it } from 'vitest';
import { requireHorizonInRange } from '../../../models/families/foundation/horizon-range.ts';
import { forecastToto2, predictToto2, windowLength } from '../../../models/families/foundation/toto.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  context_length: number;
  forecast_config: { imputation: string; decode_block_size: number | null; has_missing_values: boolean };
  cases: {
    name: string;
    horizon: number;
    /** Config fields the case overrides (the quantile cap's case). */
    forecast_config?: { quantile_real_cap_k: number };
    series: { target: JsonSeries }[];
    /** [series][level][step], levels 0.1..0.9. */
    expected: { quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('toto-2');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('toto-2');

describe('toto-2 adapter against Toto2GluonTSModel (toto-2 2.0.0; tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, long horizons and a batch', () => {
    const byName = new Map(reference.cases.map((c) => [c.name, c]));
    for (const name of ['missing_values', 'short_histories', 'long_horizon', 'longer_than_context', 'batch_of_40', 'quantile_cap'])
      expect(byName.has(name)).toBe(true);
    // The pipeline's defaults the adapter follows: one pass for the whole horizon, ffill imputation.
    expect(reference.forecast_config).toMatchObject({ imputation: 'ffill', decode_block_size: null, has_missing_values: true });
    expect(reference.context_length).toBe(manifest.context_length);
    // A long horizon shrinks the context; past the context, to a single patch.
    expect(windowLength(manifest, byName.get('long_horizon')!.horizon)).toBeLessThan(manifest.context_length);
    expect(windowLength(manifest, byName.get('longer_than_context')!.horizon)).toBe(manifest.patch_size);
    expect(byName.get('missing_values')!.series.some((s) => s.target[0] === null)).toBe(true);
  });

  for (const c of reference.cases) {
    it(`${c.name}: the nine quantile levels within ${TOLERANCE} relative error`, async () => {
      const histories = c.series.map((s) => toFloat64(s.target));
      const options = c.forecast_config ? { ...manifest, forecast_config: { ...manifest.forecast_config, ...c.forecast_config } } : manifest;
      const forecasts = await predictToto2(run, options, histories, c.horizon);
      const agreement = new Agreement();
      forecasts.forEach((levels, i) => {
        const floor = level(histories[i]);
        levels.forEach((values, k) => agreement.add(values, c.expected.quantiles[i][k], `series ${i} level ${manifest.quantile_levels[k]}`, floor));
      });
      console.log(`toto-2 ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('forecasts tasks of mixed horizons in input order, the median as the point, requested levels mapped', async () => {
    const cases = ['basic', 'long_horizon'].map((name) => reference.cases.find((x) => x.name === name)!);
    const tasks: ForecastTask[] = cases.flatMap((c) =>
      c.series.map((s) => ({ history: toFloat64(s.target), horizon: c.horizon, quantiles: [0.1, 0.25, 0.5, 0.9], seasonLength: 1 })),
    );
    const out = await forecastToto2(run, manifest, tasks);
    const expected = cases.flatMap((c) => c.expected.quantiles);
    const agreement = new Agreement();
    out.forEach((f, i) => {
      const floor = level(tasks[i].history);
      agreement.add(f.mean, expected[i][4], `task ${i} point`, floor);
      agreement.add(f.quantiles[0], expected[i][0], `task ${i} q0.1`, floor);
      agreement.add(f.quantiles[2], expected[i][4], `task ${i} q0.5`, floor);
      agreement.add(f.quantiles[3], expected[i][8], `task ${i} q0.9`, floor);
      // 0.25 lies halfway between the model's 0.2 and 0.3.
      const halfway = expected[i][1].map((v, t) => (v! + expected[i][2][t]!) / 2);
      agreement.add(f.quantiles[1], halfway, `task ${i} q0.25`, floor);
    });
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
  });

  it('forecasts a series alike alone and in a batch', async () => {
    const c = reference.cases.find((x) => x.name === 'batch_of_40')!;
    const histories = c.series.map((s) => toFloat64(s.target));
    const together = await predictToto2(run, manifest, histories, c.horizon);
    const [alone] = await predictToto2(run, manifest, [histories[7]], c.horizon);
    const agreement = new Agreement();
    alone.forEach((values, k) => agreement.add(values, Array.from(together[7][k]), `level ${k}`, level(histories[7])));
    expect(agreement.worst, agreement.where).toBeLessThan(1e-5);
  });

  it('refuses a horizon past the positions of one pass, naming the limit', () => {
    const most = (manifest.max_positions - 1) * manifest.patch_size;
    expect(() => requireHorizonInRange('toto-2', manifest, most)).not.toThrow();
    expect(() => requireHorizonInRange('toto-2', manifest, most + 1)).toThrow(ModelInputError);
    expect(() => requireHorizonInRange('toto-2', manifest, most + 1)).toThrow(/at most \d+ steps/);
  });
});
