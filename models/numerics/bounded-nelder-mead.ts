/**
 * Bounded Nelder-Mead as statsforecast runs it (its Theta, CES and ETS fits): adaptive coefficients (Gao and Han
 * 2012), every trial point clamped into the box, a first simplex that steps each coordinate by 5%
 * (or 1e-4 from zero), and a stop once the population standard deviation of the simplex's values
 * falls under `tolStd`. Same steps, same order, so the fitted parameters match the reference's.
 */

export interface NelderMeadOptions {
  lower: Float64Array;
  upper: Float64Array;
  initStep?: number;
  zeroPert?: number;
  maxIter?: number;
  tolStd?: number;
}

export interface NelderMeadResult {
  x: Float64Array;
  value: number;
  iterations: number;
}

function clampInto(x: Float64Array, lower: Float64Array, upper: Float64Array): Float64Array {
  for (let i = 0; i < x.length; i++) x[i] = Math.min(Math.max(x[i], lower[i]), upper[i]);
  return x;
}

function populationSd(values: Float64Array): number {
  let mean = 0;
  for (const v of values) mean += v;
  mean /= values.length;
  let sum = 0;
  for (const v of values) sum += (v - mean) * (v - mean);
  return Math.sqrt(sum / values.length);
}

export function nelderMead(f: (x: Float64Array) => number, start: Float64Array, options: NelderMeadOptions): NelderMeadResult {
  const { lower, upper, initStep = 0.05, zeroPert = 1e-4, maxIter = 1000, tolStd = 1e-4 } = options;
  const n = start.length;
  const gamma = 1 + 2 / n;
  const rho = 0.75 - 1 / (2 * n);
  const sigma = 1 - 1 / n;
  const x0 = clampInto(Float64Array.from(start), lower, upper);
  const simplex: Float64Array[] = Array.from({ length: n + 1 }, () => Float64Array.from(x0));
  for (let i = 0; i < n; i++) {
    const v = simplex[i][i];
    simplex[i][i] = Math.min(Math.max(v === 0 ? zeroPert : v * (1 + initStep), lower[i]), upper[i]);
  }
  const values = Float64Array.from(simplex, (x) => f(x));
  const order = Array.from({ length: n + 1 }, (_, i) => i);
  const byValue = (a: number, b: number) => values[a] - values[b];
  const sortByValue = order.length < MIN_MERGE ? () => insertionSortAsV8(order, values) : () => order.sort(byValue);
  const sums = new ColumnSums(simplex);
  const centroid = new Float64Array(n);
  // Trial points are written into spare vectors; a vector leaves the spares when it joins the
  // simplex and the one it replaces comes back, so the search allocates nothing per step.
  const spares: Float64Array[] = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  const along = (t: number, towards: Float64Array): Float64Array => {
    const p = spares.pop()!;
    for (let j = 0; j < n; j++) p[j] = centroid[j] + t * (towards[j] - centroid[j]);
    return clampInto(p, lower, upper);
  };
  const replaceWorst = (worst: number, x: Float64Array, value: number, unused?: Float64Array) => {
    spares.push(simplex[worst]);
    if (unused) spares.push(unused);
    simplex[worst] = x;
    values[worst] = value;
    sums.rowChanged(worst);
  };

  let best = 0;
  let iter = 0;
  for (; iter < maxIter; iter++) {
    sortByValue();
    best = order[0];
    const worst = order[n];
    const secondWorst = order[n - 1];
    if (populationSd(values) < tolStd) break;

    // Column sums less the worst row, over n: the reference's arithmetic, in its order.
    const totals = sums.totals();
    const worstRow = simplex[worst];
    for (let j = 0; j < n; j++) centroid[j] = (totals[j] - worstRow[j]) / n;

    const reflected = along(-1, worstRow);
    const fr = f(reflected);
    if (values[best] <= fr && fr < values[secondWorst]) {
      replaceWorst(worst, reflected, fr);
      continue;
    }
    if (fr < values[best]) {
      const expanded = along(gamma, reflected);
      const fe = f(expanded);
      if (fe < fr) replaceWorst(worst, expanded, fe, reflected);
      else replaceWorst(worst, reflected, fr, expanded);
      continue;
    }
    if (values[secondWorst] <= fr && fr < values[worst]) {
      const outside = along(rho, reflected);
      const fo = f(outside);
      if (fo <= fr) {
        replaceWorst(worst, outside, fo, reflected);
        continue;
      }
      spares.push(outside);
    } else {
      const inside = along(-rho, reflected);
      const fi = f(inside);
      if (fi < values[worst]) {
        replaceWorst(worst, inside, fi, reflected);
        continue;
      }
      spares.push(inside);
    }
    spares.push(reflected);
    // Shrink towards the best point (which keeps its value).
    for (let i = 0; i <= n; i++) {
      if (i === best) continue;
      for (let j = 0; j < n; j++) simplex[i][j] = simplex[best][j] + sigma * (simplex[i][j] - simplex[best][j]);
      clampInto(simplex[i], lower, upper);
      values[i] = f(simplex[i]);
    }
    sums.allChanged();
  }
  return { x: Float64Array.from(simplex[best]), value: values[best], iterations: iter + 1 };
}

/** V8 sorts arrays shorter than this by one run and binary insertion (no merges). */
const MIN_MERGE = 64;

/**
 * `order.sort((a, b) => values[a] - values[b])` for fewer than 64 indices, step for step as V8's
 * TimSort does it at that size (builtins/array-sort.tq: CountAndMakeRun, then
 * BinaryInsertionSort; a comparison that is NaN, as Infinity - Infinity, counts as 0), so ties
 * among equal values, which decide the simplex's path, come out exactly as before. Between two
 * steps of the search only the worst point's value changes, so the run covers all but that one
 * index and the sort costs a few comparisons, where the built-in pays a call per comparison.
 */
export function insertionSortAsV8(order: number[], values: Float64Array): void {
  const high = order.length;
  if (high < 2) return;
  let run = 2;
  const descending = compareAsV8(values, order[1], order[0]) < 0;
  for (let i = 2; i < high; i++) {
    const c = compareAsV8(values, order[i], order[i - 1]);
    if (descending ? c >= 0 : c < 0) break;
    run++;
  }
  if (descending) reverseRange(order, 0, run);
  for (let start = run; start < high; start++) {
    const pivot = order[start];
    let left = 0;
    let right = start;
    while (left < right) {
      const mid = left + ((right - left) >> 1);
      if (compareAsV8(values, pivot, order[mid]) < 0) right = mid;
      else left = mid + 1;
    }
    for (let p = start; p > left; p--) order[p] = order[p - 1];
    order[left] = pivot;
  }
}

function compareAsV8(values: Float64Array, a: number, b: number): number {
  const v = values[a] - values[b];
  return v !== v ? 0 : v;
}

function reverseRange(a: number[], from: number, to: number): void {
  for (let i = from, j = to - 1; i < j; i++, j--) [a[i], a[j]] = [a[j], a[i]];
}

/**
 * Column sums of the simplex in the order the reference's Eigen reduction adds them: in order up
 * to four rows; from five, the first row plus blocks of four as ((a + b) + (c + d)), then the
 * rest in order. The orders differ in the last bits only, but an optimiser's path amplifies them
 * (CES's four-parameter fits moved visibly with a plain left-to-right sum), so the sums are never
 * updated by subtracting a row. Instead each addend of that chain (a row, or a block's inner sum)
 * and each partial sum is kept: a step of the search replaces one row, which changes one addend
 * and the partial sums after it. Same additions, same order, same bits, at a fraction of the
 * cost of summing every row again (most of the search's own cost at ETS's 50-odd parameters).
 */
class ColumnSums {
  /** The addend (chain step) each row belongs to. */
  private readonly stepOfRow: Int32Array;
  /** The rows each addend adds: one, or four from its first. */
  private readonly firstRow: Int32Array;
  private readonly isBlock: Uint8Array;
  /** A block's inner sum ((a + b) + (c + d)); unused for one-row addends, which are read in place. */
  private readonly blockSums: Float64Array[];
  private readonly blockStale: Uint8Array;
  /** partial[s] = the chain's sum through addend s. */
  private readonly partial: Float64Array[];
  /** The first addend whose partial sum is out of date (the step count when none is). */
  private staleFrom = 0;

  constructor(private readonly simplex: readonly Float64Array[]) {
    const rows = simplex.length;
    const first: number[] = [0];
    const width: number[] = [1];
    let i = 1;
    if (rows >= 5) for (; i + 3 < rows; i += 4) (first.push(i), width.push(4));
    for (; i < rows; i++) (first.push(i), width.push(1));
    this.firstRow = Int32Array.from(first);
    this.isBlock = Uint8Array.from(width, (w) => (w === 4 ? 1 : 0));
    this.stepOfRow = new Int32Array(rows);
    first.forEach((row, step) => this.stepOfRow.fill(step, row, row + width[step]));
    const columns = simplex[0].length;
    this.blockSums = first.map(() => new Float64Array(columns));
    this.blockStale = new Uint8Array(first.length);
    this.partial = first.map(() => new Float64Array(columns));
    this.allChanged();
  }

  rowChanged(row: number): void {
    const step = this.stepOfRow[row];
    this.blockStale[step] = 1;
    if (step < this.staleFrom) this.staleFrom = step;
  }

  allChanged(): void {
    this.blockStale.fill(1);
    this.staleFrom = 0;
  }

  /** The column sums (a view kept by this object: read it before the simplex changes again). */
  totals(): Float64Array {
    const steps = this.firstRow.length;
    const columns = this.partial[0].length;
    for (let step = this.staleFrom; step < steps; step++) {
      const sum = this.partial[step];
      const addend = this.addend(step);
      if (step === 0) {
        for (let j = 0; j < columns; j++) sum[j] = addend[j];
      } else {
        const before = this.partial[step - 1];
        for (let j = 0; j < columns; j++) sum[j] = before[j] + addend[j];
      }
    }
    this.staleFrom = steps;
    return this.partial[steps - 1];
  }

  private addend(step: number): Float64Array {
    const i = this.firstRow[step];
    if (!this.isBlock[step]) return this.simplex[i];
    const out = this.blockSums[step];
    if (this.blockStale[step]) {
      const a = this.simplex[i];
      const b = this.simplex[i + 1];
      const c = this.simplex[i + 2];
      const d = this.simplex[i + 3];
      for (let j = 0; j < out.length; j++) out[j] = a[j] + b[j] + (c[j] + d[j]);
      this.blockStale[step] = 0;
    }
    return out;
  }
}
