/**
 * Automatic model selection as R's `ets(y)` with its defaults (model "ZZZ"): fit every allowed
 * structure by maximum likelihood and keep the smallest AICc, with R's two special routes for
 * constant and very short series. With estimation `statsforecast` each candidate is fitted as
 * AutoETS fits it: docs/decisions/008-aets-estimates-as-statsforecast.md.
 */
import { fitEtsBounded, SharedUpperBounds } from './statsforecast-estimation.ts';
import { fitEts } from './r-estimation.ts';
import { fitSmoothing } from './holt-winters.ts';
import { ADDITIVE, MULTIPLICATIVE, NONE, specName, type EtsFit, type EtsSpec, type SeasonKind, type TrendKind } from './ets-types.ts';

/** R's `ets` ignores seasonality above this period (its C kernel holds at most 24 indices). */
export const MAX_SEASON = 24;

/** Thrown when no model can be produced (R's "No model able to be fitted"). */
export class NoModelError extends Error {}

/**
 * R's `is.constant`: all.equal(y, rep(y[1], n)) with tolerance sqrt(eps), i.e. the mean absolute
 * deviation from y[1], over the values that differ, relative to their mean absolute size.
 */
export function isConstant(y: Float64Array): boolean {
  const tol = Math.sqrt(Number.EPSILON);
  const first = y[0];
  let count = 0;
  let sumAbs = 0;
  let sumDiff = 0;
  for (let i = 0; i < y.length; i++) {
    if (y[i] === first) continue;
    count++;
    sumAbs += Math.abs(y[i]);
    sumDiff += Math.abs(y[i] - first);
  }
  if (count === 0) return true;
  let scale = sumAbs / count;
  if (!(Number.isFinite(scale) && scale > tol)) scale = 1;
  return sumDiff / (count * scale) <= tol;
}

/** How each candidate is estimated: as R's `ets()`, or as statsforecast's AutoETS. */
export type EtsEstimation = 'r' | 'statsforecast';

/** The candidate structures the automatic search tries for this series. */
export function candidateSpecs(n: number, m: number, positive: boolean, estimation: EtsEstimation = 'r'): EtsSpec[] {
  const seasonal = m > 1 && (estimation === 'statsforecast' || m <= MAX_SEASON) && n > m;
  const errors = positive ? ([ADDITIVE, MULTIPLICATIVE] as const) : ([ADDITIVE] as const);
  const trends: TrendKind[] = [NONE, ADDITIVE];
  const seasons: SeasonKind[] = seasonal ? [NONE, ADDITIVE, MULTIPLICATIVE] : [NONE];
  const out: EtsSpec[] = [];
  for (const error of errors) {
    for (const trend of trends) {
      for (const season of seasons) {
        for (const damped of [true, false]) {
          if (trend === NONE && damped) continue;
          if (error === ADDITIVE && season === MULTIPLICATIVE) continue;
          out.push({ error, trend, season, damped });
        }
      }
    }
  }
  return out;
}

export interface Selection {
  readonly best: EtsFit;
  /** Every candidate tried with its AICc (Infinity where the fit failed); empty on special routes. */
  readonly candidates: ReadonlyArray<{ readonly method: string; readonly aicc: number }>;
}

/**
 * The smallest-AICc fit among `candidateSpecs`: in R's order (ties go to the first), error A then
 * M, trend N then A, season N, A, M, damped before undamped. Excluded, as in R with restrict = TRUE
 * and no multiplicative trend: additive error with multiplicative season (infinite variance),
 * anything multiplicative on data that is not strictly positive, and seasonal models when m = 1,
 * m > 24 (R only; `statsforecast` tries any period) or n <= m.
 *
 * Before that, R's special routes (for both estimations): a constant series becomes simple
 * exponential smoothing with alpha = 0.99999 (flat forecast, zero variance), and a series of at
 * most 6 observations (too short for ETS(A,N,N) with its 4-observation margin) gets least-squares
 * Holt or simple smoothing, whichever leaves the smaller residual variance.
 */
export function selectEts(y: Float64Array, m: number, estimation: EtsEstimation = 'r'): Selection {
  const n = y.length;
  if (n === 0) throw new NoModelError('empty history');
  if (isConstant(y)) {
    return { best: fitSmoothing(y, false, m, 0.99999) as EtsFit, candidates: [] };
  }
  if (n <= 6) {
    const holt = fitSmoothing(y, true, m);
    const ses = fitSmoothing(y, false, m);
    if (!ses) throw new NoModelError('unable to estimate a model');
    return { best: holt && holt.sigma2 < ses.sigma2 ? holt : ses, candidates: [] };
  }

  let positive = true;
  for (let i = 0; i < n; i++) if (!(y[i] > 0)) positive = false;

  let best: EtsFit | null = null;
  const candidates: Array<{ method: string; aicc: number }> = [];
  const shared = new SharedUpperBounds();
  for (const spec of candidateSpecs(n, m, positive, estimation)) {
    const fit = estimation === 'r' ? fitEts(y, spec, m) : fitEtsBounded(y, spec, m, shared);
    const aicc = fit ? fit.aicc : Infinity;
    candidates.push({ method: specName(spec), aicc });
    if (fit && !Number.isNaN(aicc) && (best === null ? aicc < Infinity : aicc < best.aicc)) best = fit;
  }
  if (!best) throw new NoModelError('no ETS model could be fitted');
  return { best, candidates };
}
