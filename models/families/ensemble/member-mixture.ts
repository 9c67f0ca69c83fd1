import type { ForecastTask } from '../../contract/model-interface.ts';

/**
 * The members' quantiles as a mixture of their predictive distributions (a linear pool): at each
 * step, the weighted mean of the members' distribution functions, read at the task's levels. The
 * mean of the members' offsets (memberQuantiles) ignores how far the members' means lie apart; a
 * mixture counts it. On a series without a season the members differ most in the trend they
 * extend (damped or not, drifting or level), and each member's own interval leaves out that
 * doubt; there the members' offsets under-cover and the mixture covers. On seasonal series the
 * offsets already cover, and the mixture widens them past the target
 * (docs/decisions/084-ensemble-mixture-for-non-seasonal-series.md).
 */

/** The levels a member's distribution is read at, besides the task's own: every 5%. */
const GRID = Array.from({ length: 19 }, (_, i) => (i + 1) / 20);

/** Whether the task's quantiles from its members come from their mixture: a series without a season. */
export function mixesMembers(task: Pick<ForecastTask, 'seasonLength'>): boolean {
  return task.seasonLength <= 1;
}

/**
 * The levels an ensemble asks its members for: the task's own, and where their mixture is read,
 * the grid too (sorted, each once), so that each member's distribution is known between the
 * levels the task asks for.
 */
export function memberLevels(task: Pick<ForecastTask, 'seasonLength' | 'quantiles'>): readonly number[] {
  if (!mixesMembers(task)) return task.quantiles;
  return [...new Set([...task.quantiles, ...GRID])].sort((a, b) => a - b);
}

/** A distribution function, piecewise linear through the points (x, p): `x` ascending, `p` the matching levels. */
interface Cdf {
  readonly x: Float64Array;
  readonly p: Float64Array;
}

/**
 * One member's distribution function at one step, through its quantiles, from level 0 to 1: the
 * outermost quantiles are continued to levels 0 and 1 along their own slope.
 */
function memberCdf(quantiles: readonly ArrayLike<number>[], levels: readonly number[], step: number): Cdf {
  const n = levels.length;
  const x = new Float64Array(n + 2);
  const p = new Float64Array(n + 2);
  for (let l = 0; l < n; l++) {
    // Crossing quantiles (a member's rounding) are made monotone, as a distribution's are.
    x[l + 1] = l > 0 ? Math.max(x[l], quantiles[l][step]) : quantiles[0][step];
    p[l + 1] = levels[l];
  }
  x[0] = x[1] - ((x[2] - x[1]) * levels[0]) / (levels[1] - levels[0]);
  x[n + 1] = x[n] + ((x[n] - x[n - 1]) * (1 - levels[n - 1])) / (levels[n - 1] - levels[n - 2]);
  p[n + 1] = 1;
  return { x, p };
}

/**
 * The distribution function at v: at v itself (`left` false, right-continuous), or just below it
 * (`left` true). The two differ where the member puts mass on a point: a member without spread,
 * or quantiles made monotone.
 */
function cdfAt({ x, p }: Cdf, v: number, left: boolean): number {
  const below = (at: number) => (left ? x[at] < v : x[at] <= v);
  if (!below(0)) return 0;
  if (below(x.length - 1)) return 1;
  // The last point below v and the next one, which is not: v lies on the segment between them.
  let lo = 0;
  let hi = x.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (below(mid)) lo = mid;
    else hi = mid;
  }
  return p[lo] + ((v - x[lo]) / (x[hi] - x[lo])) * (p[hi] - p[lo]);
}

/**
 * The mixture's quantiles at `asked` levels around the combined `mean`: members' quantiles at
 * `levels` (ascending, at least two), weights summing to 1. The mixture's own centre, the
 * members' weighted mean, is moved onto `mean` (the same with a mean combination). The mixture's
 * distribution function is piecewise linear between the members' points, so each quantile is
 * exact: the first value where the mixture reaches its level. Levels stay ordered.
 */
export function mixtureQuantiles(
  mean: Float64Array,
  members: readonly { readonly mean: ArrayLike<number>; readonly quantiles: readonly ArrayLike<number>[] }[],
  weights: readonly number[],
  levels: readonly number[],
  asked: readonly number[],
): Float64Array[] {
  const out = asked.map(() => new Float64Array(mean.length));
  for (let j = 0; j < mean.length; j++) {
    const cdfs = members.map((m) => memberCdf(m.quantiles, levels, j));
    const points = [...new Set(cdfs.flatMap((c) => Array.from(c.x)))].sort((a, b) => a - b);
    const mixed = (v: number, left: boolean) => cdfs.reduce((sum, c, k) => sum + weights[k] * cdfAt(c, v, left), 0);
    const at = points.map((v) => mixed(v, false));
    const below = points.map((v) => mixed(v, true));
    let shift = mean[j];
    members.forEach((m, k) => (shift -= weights[k] * m.mean[j]));
    asked.forEach((level, q) => {
      // The first point where the mixture reaches the level: reached on the way up to it (linear
      // there), or only by its own mass.
      let b = 0;
      while (b < points.length - 1 && at[b] < level) b++;
      const rising = b > 0 && below[b] >= level;
      const value = rising ? points[b - 1] + ((level - at[b - 1]) / (below[b] - at[b - 1])) * (points[b] - points[b - 1]) : points[b];
      out[q][j] = value + shift;
    });
  }
  return out;
}
