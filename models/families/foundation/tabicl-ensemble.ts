/**
 * The ensemble of `TabICLRegressor` (tabicl 2.2.0, `EnsembleGenerator` in _sklearn/preprocessing.py):
 * which feature orders and normalisations its members see, and the Yeo-Johnson normalisation. The
 * orders come from Python's `random` module seeded with `random_state`, whose generator (MT19937,
 * `_randbelow`) is reproduced so that they are the reference's own. docs/foundation-models.md, "TabICL".
 */

/** Python's `random.Random(seed)` (CPython 3.x), the calls the ensemble makes. */
export class PythonRandom {
  private readonly mt = new Uint32Array(624);
  private index = 624;

  constructor(seed: number) {
    // random.seed(int): the absolute value as 32-bit words, least significant first.
    const key: number[] = [];
    let rest = Math.abs(Math.trunc(seed));
    do {
      key.push(rest % 2 ** 32);
      rest = Math.floor(rest / 2 ** 32);
    } while (rest > 0);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) mt[i] = (Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i) >>> 0;
  }

  private initByArray(key: number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= 624) {
        mt[0] = mt[623];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  private next32(): number {
    const mt = this.mt;
    if (this.index >= 624) {
      for (let k = 0; k < 624; k++) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7fffffff);
        mt[k] = (mt[(k + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
      }
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `_randbelow_with_getrandbits(n)`, for n < 2^32. */
  randbelow(n: number): number {
    if (n <= 0) return 0;
    const k = 32 - Math.clz32(n); // n.bit_length()
    let r = this.next32() >>> (32 - k);
    while (r >= n) r = this.next32() >>> (32 - k);
    return r;
  }

  /** `random.shuffle` (in place). */
  shuffle<T>(x: T[]): void {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
  }

  /** `random.sample(population, k)` for k equal to the population's size (`Shuffler`'s "random" orders). */
  permutation<T>(population: readonly T[]): T[] {
    const n = population.length;
    const out: T[] = [];
    // CPython's sample: a pool when n is small against its set-size heuristic, else a selection set.
    let setsize = 21;
    if (n > 5) setsize += 4 ** Math.ceil(Math.log(n * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < n; i++) {
        const j = this.randbelow(n - i);
        out.push(pool[j]);
        pool[j] = pool[n - i - 1];
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < n; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        out.push(population[j]);
      }
    }
    return out;
  }
}

/** `Shuffler(n, "latin", random_state=seed).shuffle(n_estimators)`: the feature orders. */
export function featureOrders(columns: number, method: 'latin' | 'none', nEstimators: number, seed: number): number[][] {
  const identity = Array.from({ length: columns }, (_, i) => i);
  if (method === 'none' || nEstimators === 1) return [identity];
  const rng = new PythonRandom(seed);
  if (columns > 4000) return Array.from({ length: nEstimators }, () => rng.permutation(identity));
  // _rls: a random Latin square, built by recursion on the symbols left.
  const rls = (symbols: number[]): number[][] => {
    if (symbols.length === 1) return [symbols];
    const sym = symbols[rng.randbelow(symbols.length)];
    symbols.splice(symbols.indexOf(sym), 1);
    const square = rls(symbols);
    square.push([...square[0]]);
    square.forEach((row, i) => row.splice(i, 0, sym));
    return square;
  };
  const square = rls([...identity]);
  rng.shuffle(square);
  const transposed = identity.map((c) => square.map((row) => row[c]));
  rng.shuffle(transposed);
  return transposed;
}

/** The members of `EnsembleGenerator._generate_ensemble`: a feature order and a normalisation each. */
export function ensembleMembers(
  columns: number,
  config: { n_estimators: number; norm_methods: readonly ('none' | 'power')[]; feat_shuffle_method: 'latin' | 'none'; random_state: number },
): { order: number[]; norm: 'none' | 'power' }[] {
  const orders = featureOrders(columns, config.feat_shuffle_method, config.n_estimators, config.random_state);
  new PythonRandom(config.random_state).shuffle(orders); // the generator's own rng_, seeded alike
  return orders.flatMap((order) => config.norm_methods.map((norm) => ({ order, norm }))).slice(0, config.n_estimators);
}

const LOG_EPS = Math.log(Number.EPSILON);
const SMALLEST_NORMAL = 2.2250738585072014e-308;

/** `scipy.stats._morestats._yeojohnson_transform` (scipy 1.17). */
export function yeoJohnson(x: number, lambda: number): number {
  if (x >= 0) return Math.abs(lambda) < Number.EPSILON ? Math.log1p(x) : Math.expm1(lambda * Math.log1p(x)) / lambda;
  return Math.abs(lambda - 2) > Number.EPSILON ? -Math.expm1((2 - lambda) * Math.log1p(-x)) / (2 - lambda) : -Math.log1p(-x);
}

/** The negative Yeo-Johnson log-likelihood (`yeojohnson_normmax`'s `_neg_llf`). */
function negLogLikelihood(lambda: number, x: readonly number[], signedLogSum: number): number {
  const y = x.map((v) => yeoJohnson(v, lambda));
  const mean = y.reduce((s, v) => s + v, 0) / y.length;
  const variance = y.reduce((s, v) => s + (v - mean) ** 2, 0) / y.length;
  const llf = (-x.length / 2) * (variance >= SMALLEST_NORMAL ? Math.log(variance) : -Infinity) + (lambda - 1) * signedLogSum;
  return Number.isFinite(llf) || Number.isNaN(llf) ? -llf : Infinity;
}

/** `scipy.optimize.fminbound` (`_minimize_scalar_bounded`, maxfun 500): Brent's bounded minimisation. */
function fminbound(f: (x: number) => number, lower: number, upper: number, xatol: number): number {
  const sqrtEps = Math.sqrt(2.2e-16);
  const goldenMean = 0.5 * (3 - Math.sqrt(5));
  let a = lower;
  let b = upper;
  let fulc = a + goldenMean * (b - a);
  let nfc = fulc;
  let xf = fulc;
  let rat = 0;
  let e = 0;
  let fx = f(xf);
  let num = 1;
  let ffulc = fx;
  let fnfc = fx;
  let xm = 0.5 * (a + b);
  let tol1 = sqrtEps * Math.abs(xf) + xatol / 3;
  let tol2 = 2 * tol1;
  const sign = (v: number): number => (v > 0 ? 1 : v < 0 ? -1 : 0);
  while (Math.abs(xf - xm) > tol2 - 0.5 * (b - a)) {
    let golden = true;
    if (Math.abs(e) > tol1) {
      golden = false;
      let r = (xf - nfc) * (fx - ffulc);
      let q = (xf - fulc) * (fx - fnfc);
      let p = (xf - fulc) * q - (xf - nfc) * r;
      q = 2 * (q - r);
      if (q > 0) p = -p;
      q = Math.abs(q);
      r = e;
      e = rat;
      if (Math.abs(p) < Math.abs(0.5 * q * r) && p > q * (a - xf) && p < q * (b - xf)) {
        rat = p / q;
        const x = xf + rat;
        if (x - a < tol2 || b - x < tol2) rat = tol1 * (sign(xm - xf) + (xm - xf === 0 ? 1 : 0));
      } else golden = true;
    }
    if (golden) {
      e = xf >= xm ? a - xf : b - xf;
      rat = goldenMean * e;
    }
    const x = xf + (sign(rat) + (rat === 0 ? 1 : 0)) * Math.max(Math.abs(rat), tol1);
    const fu = f(x);
    num++;
    if (fu <= fx) {
      if (x >= xf) a = xf;
      else b = xf;
      fulc = nfc;
      ffulc = fnfc;
      nfc = xf;
      fnfc = fx;
      xf = x;
      fx = fu;
    } else {
      if (x < xf) a = x;
      else b = x;
      if (fu <= fnfc || nfc === xf) {
        fulc = nfc;
        ffulc = fnfc;
        nfc = x;
        fnfc = fu;
      } else if (fu <= ffulc || fulc === xf || fulc === nfc) {
        fulc = x;
        ffulc = fu;
      }
    }
    xm = 0.5 * (a + b);
    tol1 = sqrtEps * Math.abs(xf) + xatol / 3;
    tol2 = 2 * tol1;
    if (num >= 500) break;
  }
  return xf;
}

/** `scipy.stats.yeojohnson_normmax(x)` (brack None): the maximum-likelihood lambda within overflow-safe bounds. */
export function yeoJohnsonLambda(x: readonly number[]): number {
  if (x.every((v) => v === 0)) return 1;
  const log1pMax = Math.log1p(20 * Math.max(...x.map(Math.abs)));
  const logTiny = (Math.log(SMALLEST_NORMAL) - LOG_EPS) / 2;
  const logMax = (Math.log(Number.MAX_VALUE) + LOG_EPS) / 2;
  let lower = logTiny / log1pMax;
  let upper = logMax / log1pMax;
  if (x.every((v) => v < 0)) [lower, upper] = [2 - upper, 2 - lower];
  else if (x.some((v) => v < 0)) [lower, upper] = [Math.max(2 - upper, lower), Math.min(2 - lower, upper)];
  const signedLogSum = x.reduce((s, v) => s + Math.sign(v) * Math.log1p(Math.abs(v)), 0);
  return fminbound((l) => negLogLikelihood(l, x, signedLogSum), lower, upper, 1.48e-8);
}
