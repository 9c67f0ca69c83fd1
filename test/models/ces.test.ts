/**
 * `ces` against statsforecast 2.1.1's AutoCES (fixtures from tools/reference/ces-fixtures.py: M4
 * Hourly and Weekly series and simulated ones on which each of the variants N, S, P and F is
 * chosen, a non-seasonal one, one with less than two seasons and short ones).
 *
 * Tolerances. The fit replicates the reference's initial states, backfitted recursion and
 * bounded Nelder-Mead step for step, so the selected variant agrees, and so do the parameters of
 * every candidate variant (to ~2e-12 relative, observed; we assert 1e-6), its criteria and the
 * mean forecasts (to ~4e-11, observed; we assert 1e-9). What remains: the last bits of the moving
 * average behind the P and F initial seasons (numpy sums it in BLAS's order), and the order in
 * which the shared Nelder-Mead sums F's four-parameter simplex (models/families/ces/ces-estimation.ts), which on a
 * few other M4 series moves F's forecasts by up to 1e-7.
 *
 * Intervals. The reference takes the 10% and 90% empirical quantiles of 5,000 simulated paths; we
 * return the normal quantiles those paths converge to (models/families/ces/ces-intervals.ts). A sample
 * quantile's standard error there is 1.71 sd / sqrt(paths): 0.024 sd for 5,000 paths, 0.012 sd
 * for 20,000. We assert every bound within 0.1 sd of the 5,000-path one (observed at most 0.064)
 * and within 0.05 sd of the 20,000-path one where recorded (observed at most 0.033), sd being our
 * own step-h standard deviation: the deviations halve as the paths quadruple, as they should.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ces, fitCes, forecastWithCes } from '../../models/families/ces/ces.ts';
import { fitVariant, fitWith, forecastMean, selectCes } from '../../models/families/ces/ces-estimation.ts';
import { pairwiseSum } from '../../models/families/ces/initial.ts';
import { discountGrowth, type CesParameters, type CesVariant } from '../../models/families/ces/recursion.ts';
import { ModelInputError, type ForecastTask } from '../../models/contract/model-interface.ts';

type Par = { alpha_0: number; alpha_1: number; beta_0: number | null; beta_1: number | null };
interface Fitted {
  par: Par;
  lik: number;
  aic: number;
  aicc: number;
  bic: number;
  sigma2: number;
}
interface Case extends Fitted {
  id: string;
  m: number;
  h: number;
  y: number[];
  seasontype: CesVariant;
  fits: Partial<Record<CesVariant, Fitted>>;
  mean: number[];
  lo80: number[];
  hi80: number[];
  lo80_20k?: number[];
  hi80_20k?: number[];
}
interface Forward {
  id: string;
  m: number;
  h: number;
  cut: number;
  y: number[];
  seasontype: CesVariant;
  par: Par;
  mean: number[];
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/ces/statsforecast.json', import.meta.url), 'utf8')) as { cases: Case[]; forward: Forward[] };
const { cases, forward } = fixture;
const Z90 = 1.2815515655446004;

const close = (actual: number, expected: number, rel = 1e-9) => expect(Math.abs(actual - expected)).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(expected)));

function closeParameters(actual: CesParameters, expected: Par, rel = 1e-6) {
  close(actual.alpha0, expected.alpha_0, rel);
  close(actual.alpha1, expected.alpha_1, rel);
  for (const [ours, theirs] of [
    [actual.beta0, expected.beta_0],
    [actual.beta1, expected.beta_1],
  ] as const) {
    if (theirs === null) expect(ours).toBeNaN();
    else close(ours, theirs, rel);
  }
}

const task = (y: ArrayLike<number>, m: number, h: number, quantiles: number[] = []): ForecastTask => ({
  history: Float64Array.from(y),
  horizon: h,
  quantiles,
  seasonLength: m,
});

describe('ces against statsforecast AutoCES', () => {
  it('covers every variant, a non-seasonal series, one shorter than two seasons and short ones', () => {
    expect(new Set(cases.map((c) => c.seasontype))).toEqual(new Set(['N', 'S', 'P', 'F']));
    expect(cases.some((c) => c.m === 1)).toBe(true);
    expect(cases.some((c) => c.m > 1 && c.y.length < 2 * c.m)).toBe(true);
    expect(cases.some((c) => c.y.length <= 12)).toBe(true);
  });

  it.each(cases.map((c) => [c.id, c] as const))('%s: same variant, parameters, criteria and mean forecast', (_, c) => {
    const y = Float64Array.from(c.y);
    const fit = selectCes(y, c.m)!;
    expect(fit.variant).toBe(c.seasontype);
    closeParameters(fit.parameters, c.par);
    close(fit.lik, c.lik);
    close(fit.aic, c.aic);
    close(fit.aicc, c.aicc);
    close(fit.bic, c.bic);
    close(fit.sigma2, c.sigma2);
    const out = ces.forecast(task(y, c.m, c.h));
    expect(out.mean).toHaveLength(c.h);
    c.mean.forEach((v, j) => close(out.mean[j], v));
  });

  it.each(cases.map((c) => [c.id, c] as const))('%s: every candidate variant fitted alike', (_, c) => {
    const y = Float64Array.from(c.y);
    for (const [variant, expected] of Object.entries(c.fits) as [CesVariant, Fitted][]) {
      const fit = fitVariant(y, c.m, variant);
      closeParameters(fit.parameters, expected.par);
      close(fit.aicc, expected.aicc);
    }
  });

  it.each(cases.map((c) => [c.id, c] as const))('%s: 80% interval is the limit of the reference simulation', (_, c) => {
    const out = ces.forecast(task(c.y, c.m, c.h, [0.1, 0.9]));
    for (let j = 0; j < c.h; j++) {
      const sd = (out.quantiles[1][j] - out.mean[j]) / Z90;
      expect(sd).toBeGreaterThan(0);
      // Symmetric around the mean: the paths are normal.
      close(out.mean[j] - out.quantiles[0][j], sd * Z90, 1e-9);
      expect(Math.abs(out.quantiles[0][j] - c.lo80[j])).toBeLessThanOrEqual(0.1 * sd);
      expect(Math.abs(out.quantiles[1][j] - c.hi80[j])).toBeLessThanOrEqual(0.1 * sd);
      if (c.lo80_20k && c.hi80_20k) {
        expect(Math.abs(out.quantiles[0][j] - c.lo80_20k[j])).toBeLessThanOrEqual(0.05 * sd);
        expect(Math.abs(out.quantiles[1][j] - c.hi80_20k[j])).toBeLessThanOrEqual(0.05 * sd);
      }
    }
  });

  it.each(forward.map((f) => [f.id, f] as const))('%s: a kept fit forecasts a longer history as AutoCES.forward does', (_, f) => {
    const choice = fitCes(task(f.y.slice(0, f.y.length - f.cut), f.m, f.h))!;
    expect(choice.variant).toBe(f.seasontype);
    closeParameters(choice.parameters, f.par);
    const out = forecastWithCes(choice, task(f.y, f.m, f.h));
    f.mean.forEach((v, j) => close(out.mean[j], v));
  });
});

describe('ces reuse between backtest refits', () => {
  const c = cases.find((k) => k.id === 'H5')!;
  const n = c.y.length - 24;

  it('a fit kept on the same history forecasts exactly as a fresh forecast', () => {
    const at = task(c.y.slice(0, n), c.m, c.h, [0.05, 0.5, 0.95]);
    expect(forecastWithCes(fitCes(at), at)).toEqual(ces.forecast(at));
    expect(ces.reuse!.forecast(ces.reuse!.fit(at), at)).toEqual(ces.forecast(at));
  });

  it('a fit kept on a longer history reruns the recursion only: it differs from a refit', () => {
    const kept = fitCes(task(c.y.slice(0, n), c.m, c.h))!;
    const later = task(c.y, c.m, c.h, [0.1, 0.9]);
    const reused = forecastWithCes(kept, later);
    const refit = ces.forecast(later);
    expect(fitCes(later)!.parameters).not.toEqual(kept.parameters);
    expect(reused.mean).not.toEqual(refit.mean);
    // ...and is the kept model run over the new history.
    expect(reused.mean).toEqual(forecastMean(fitWith(later.history, kept.m, kept.variant, kept.parameters), c.h));
  });

  it("the discount growth is the level recursion's spectral radius (N: a 2 x 2 matrix, in closed form)", () => {
    for (const [a0, a1] of [
      [1.3, 0.9],
      [0.14, 0.9998],
      [1.9, 1.1],
    ]) {
      // With nothing observed: l' = (1 - d) l - (1 - a1) c, c' = (1 - g) l + (1 - a0) c, d = a0 - a1, g = a0 + a1.
      const [p, q, r, t] = [1 - (a0 - a1), -(1 - a1), 1 - (a0 + a1), 1 - a0];
      const trace = p + t;
      const det = p * t - q * r;
      const disc = trace * trace - 4 * det;
      const radius = disc >= 0 ? Math.max(Math.abs((trace + Math.sqrt(disc)) / 2), Math.abs((trace - Math.sqrt(disc)) / 2)) : Math.sqrt(det);
      close(discountGrowth('N', 1, { alpha0: a0, alpha1: a1, beta0: NaN, beta1: NaN }), radius, 1e-3);
    }
  });

  it('a fit from a history too short for its season, or with an exploding filter, is not kept: a longer history selects afresh', () => {
    // A monthly trend with a yearly cycle; its first 6 months fit the non-seasonal variant only.
    const y = Float64Array.from({ length: 96 }, (_, t) => 1000 + 5 * t + 60 * Math.sin((2 * Math.PI * t) / 12) + ((t * 37) % 11));
    const short = fitCes(task(y.slice(0, 6), 12, 18))!;
    expect([short.variant, short.seasonTried]).toEqual(['N', false]);
    const later = task(y, 12, 18, [0.1, 0.9]);
    expect(forecastWithCes(short, later)).toEqual(ces.forecast(later));
    // Without a season to gain, an unstable kept fit is refitted too, where a stable one is kept.
    const yearly = task(y.slice(0, 60), 1, 6, [0.1, 0.9]);
    const unstable = { variant: 'N' as const, m: 1, parameters: { alpha0: 0.14, alpha1: 0.9998, beta0: NaN, beta1: NaN }, seasonTried: false };
    expect(discountGrowth('N', 1, unstable.parameters)).toBeGreaterThan(1.001);
    expect(forecastWithCes(unstable, yearly)).toEqual(ces.forecast(yearly));
    const kept = fitCes(task(y.slice(0, 48), 1, 6))!;
    expect(discountGrowth(kept.variant, kept.m, kept.parameters)).toBeLessThanOrEqual(1.001);
    expect(forecastWithCes(kept, yearly).mean).toEqual(forecastMean(fitWith(yearly.history, kept.m, kept.variant, kept.parameters), 6));
  });

  it('a constant history keeps no fit; a kept fit on a constant history forecasts the constant', () => {
    const flat = task(new Float64Array(40).fill(3), 4, 3, [0.1]);
    expect(fitCes(flat)).toBeNull();
    expect(forecastWithCes(null, task(cases[0].y, 24, 3)).mean).toEqual(ces.forecast(task(cases[0].y, 24, 3)).mean);
    const kept = fitCes(task(cases[0].y, 24, 3))!;
    expect([...forecastWithCes(kept, flat).mean]).toEqual([3, 3, 3]);
  });
});

describe('ces edge cases', () => {
  it('refuses histories too short to fit, and bad horizons, with clear errors', () => {
    for (const [y, m] of [
      [[1, 2, 3, 4], 1],
      [[1, 2, 3, 4], 2],
      [[5, 1, 3], 12],
    ] as const) {
      expect(() => ces.forecast(task(y, m, 2))).toThrow(ModelInputError);
      expect(() => ces.forecast(task(y, m, 2))).toThrow(/at least 5 observations/);
    }
    expect(() => ces.forecast(task(cases[0].y, 24, 0))).toThrow(/whole horizon/);
    expect(() => fitCes(task([1, 2], 1, 1))).toThrow(ModelInputError);
    // Five points are enough for the non-seasonal model.
    expect(ces.forecast(task([3, 4, 3.5, 5, 4.5], 1, 2)).mean.every(Number.isFinite)).toBe(true);
  });

  it('forecasts a constant series as that constant, with no spread', () => {
    const out = ces.forecast(task(new Float64Array(30).fill(7), 12, 5, [0.1, 0.9]));
    expect([...out.mean]).toEqual([7, 7, 7, 7, 7]);
    expect(out.quantiles.map((q) => [...q])).toEqual([
      [7, 7, 7, 7, 7],
      [7, 7, 7, 7, 7],
    ]);
  });

  it('returns quantiles in the order asked, ordered by level, the median at the mean', () => {
    const c = cases.find((k) => k.id === 'W100')!;
    const levels = [0.9, 0.025, 0.5, 0.1, 0.975];
    const out = ces.forecast(task(c.y, c.m, c.h, levels));
    expect(out.quantiles).toHaveLength(levels.length);
    const sorted = [1, 3, 2, 0, 4].map((i) => out.quantiles[i]);
    for (let j = 0; j < c.h; j++) {
      for (let q = 1; q < sorted.length; q++) expect(sorted[q][j]).toBeGreaterThan(sorted[q - 1][j]);
      close(out.quantiles[2][j], out.mean[j], 1e-12);
    }
    // The spread grows with the horizon.
    expect(out.quantiles[0][c.h - 1] - out.mean[c.h - 1]).toBeGreaterThan(out.quantiles[0][0] - out.mean[0]);
  });

  it('is deterministic: the same history gives the same output', () => {
    const y = cases[0].y;
    expect(ces.forecast(task(y, 24, 24, [0.05, 0.95]))).toEqual(ces.forecast(task(y, 24, 24, [0.05, 0.95])));
  });

  it('sums as numpy does (pairwise, in blocks of eight), not left to right', () => {
    // np.sum of these arrays, from numpy 2.4; a left-to-right sum gives 6.282663880299502 and 33.97260273973335.
    expect(pairwiseSum(Float64Array.from({ length: 300 }, (_, i) => 1 / (i + 1)))).toBe(6.282663880299504);
    expect(pairwiseSum(Float64Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1009) / 7.3 - 69.1))).toBe(33.97260273973326);
    expect(pairwiseSum([1, 2, 3])).toBe(6);
  });
});
