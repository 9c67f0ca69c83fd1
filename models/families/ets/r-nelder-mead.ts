/**
 * Nelder-Mead simplex minimisation with the exact rules of R's `optim(method = "Nelder-Mead")`
 * (Nash 1990, Compact Numerical Methods, Algorithm 19), which R's `ets()` runs directly on the
 * unscaled vector (smoothing parameters followed by initial states). Rule for rule, because on
 * seasonal models the evaluation budget usually runs out before convergence, so where the search
 * ends depends on every step taken.
 */

export interface NelderMeadOptions {
  readonly maxit: number;
  /** Relative convergence tolerance; R passes sqrt(machine epsilon). */
  readonly intol: number;
  readonly abstol: number;
}

export const R_NELDER_MEAD: NelderMeadOptions = { maxit: 2000, intol: Math.sqrt(Number.EPSILON), abstol: -Infinity };

/** R's stand-in for a non-finite objective value. */
const BIG = 1.0e35;

export interface NelderMeadResult {
  readonly x: Float64Array;
  readonly value: number;
  readonly evaluations: number;
}

/** Thrown when the objective is not finite at the starting point (R errors out there too). */
export class NonFiniteStartError extends Error {}

/**
 * Minimises `fn` from `x0` by R's rules:
 * - the initial simplex steps every coordinate by 10% of the largest |x0_i| (0.1 if x0 = 0);
 * - reflection 1, contraction 0.5, expansion 2; shrink towards the best vertex only when both the
 *   reflection and the contraction fail, and the search stops if a shrink does not reduce the
 *   simplex size;
 * - convergence when the spread of values is below intol * (|f(x0)| + intol), f(x0) being the
 *   value at the start (not the current best);
 * - the budget is checked after each iteration (so it may overrun by a few evaluations), and the
 *   answer is the vertex that was best at the top of the last iteration.
 */
export function nelderMead(fn: (x: Float64Array) => number, x0: ArrayLike<number>, options: NelderMeadOptions = R_NELDER_MEAD): NelderMeadResult {
  const n = x0.length;
  const n1 = n + 1;
  // Vertex j occupies simplex[j*n .. j*n+n); values[j] its objective value.
  const simplex = new Float64Array(n1 * n);
  const values = new Float64Array(n1);
  const centroid = new Float64Array(n);
  const trial = new Float64Array(n);
  const reflected = new Float64Array(n);

  for (let i = 0; i < n; i++) trial[i] = x0[i];
  let f = fn(trial);
  if (!Number.isFinite(f)) throw new NonFiniteStartError('objective not finite at the starting values');
  let evaluations = 1;
  const convtol = options.intol * (Math.abs(f) + options.intol);
  values[0] = f;
  simplex.set(trial, 0);

  let step = 0;
  for (let i = 0; i < n; i++) if (0.1 * Math.abs(trial[i]) > step) step = 0.1 * Math.abs(trial[i]);
  if (step === 0) step = 0.1;
  let size = 0;
  for (let j = 1; j < n1; j++) {
    const base = j * n;
    simplex.set(trial, base);
    // Grow the step until it actually changes the coordinate (huge |x| can swallow it).
    let tryStep = step;
    while (simplex[base + j - 1] === trial[j - 1]) {
      simplex[base + j - 1] = trial[j - 1] + tryStep;
      tryStep *= 10;
    }
    size += tryStep;
  }
  let oldSize = size;
  let evaluateVertices = true;
  let best = 0;

  do {
    if (evaluateVertices) {
      for (let j = 0; j < n1; j++) {
        if (j === best) continue;
        const v = fn(simplex.subarray(j * n, j * n + n));
        values[j] = Number.isFinite(v) ? v : BIG;
        evaluations++;
      }
      evaluateVertices = false;
    }

    let low = values[best];
    let high = low;
    let worst = best;
    for (let j = 0; j < n1; j++) {
      if (j === best) continue;
      const v = values[j];
      if (v < low) {
        best = j;
        low = v;
      }
      if (v > high) {
        worst = j;
        high = v;
      }
    }
    if (high <= low + convtol || low <= options.abstol) break;

    const worstBase = worst * n;
    for (let i = 0; i < n; i++) {
      let t = -simplex[worstBase + i];
      for (let j = 0; j < n1; j++) t += simplex[j * n + i];
      centroid[i] = t / n;
    }
    for (let i = 0; i < n; i++) trial[i] = 2 * centroid[i] - simplex[worstBase + i];
    f = fn(trial);
    if (!Number.isFinite(f)) f = BIG;
    evaluations++;
    const reflectedValue = f;

    if (reflectedValue < low) {
      // Expansion: go twice as far beyond the centroid.
      for (let i = 0; i < n; i++) {
        reflected[i] = trial[i];
        trial[i] = 2 * trial[i] - centroid[i];
      }
      f = fn(trial);
      if (!Number.isFinite(f)) f = BIG;
      evaluations++;
      if (f < reflectedValue) {
        simplex.set(trial, worstBase);
        values[worst] = f;
      } else {
        simplex.set(reflected, worstBase);
        values[worst] = reflectedValue;
      }
    } else {
      if (reflectedValue < high) {
        simplex.set(trial, worstBase);
        values[worst] = reflectedValue;
      }
      // Contraction: halfway between the (possibly replaced) worst vertex and the centroid.
      for (let i = 0; i < n; i++) trial[i] = 0.5 * simplex[worstBase + i] + 0.5 * centroid[i];
      f = fn(trial);
      if (!Number.isFinite(f)) f = BIG;
      evaluations++;
      if (f < values[worst]) {
        simplex.set(trial, worstBase);
        values[worst] = f;
      } else if (reflectedValue >= high) {
        // Shrink every vertex halfway towards the best one.
        evaluateVertices = true;
        size = 0;
        const bestBase = best * n;
        for (let j = 0; j < n1; j++) {
          if (j === best) continue;
          const base = j * n;
          for (let i = 0; i < n; i++) {
            simplex[base + i] = 0.5 * (simplex[base + i] - simplex[bestBase + i]) + simplex[bestBase + i];
            size += Math.abs(simplex[base + i] - simplex[bestBase + i]);
          }
        }
        if (size < oldSize) oldSize = size;
        else break;
      }
    }
  } while (evaluations <= options.maxit);

  return { x: simplex.slice(best * n, best * n + n), value: values[best], evaluations };
}
