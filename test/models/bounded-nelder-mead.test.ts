/**
 * The bounded Nelder-Mead keeps its column sums and its ordering incrementally (for speed at
 * ETS's 50-odd parameters), but must take exactly the path of the plain algorithm, since the
 * fits are checked against statsforecast to 1e-9. The oracle below is that plain algorithm:
 * every column summed again in the reference's order and the built-in sort at every step.
 */
import { describe, expect, it } from 'vitest';
import { insertionSortAsV8, nelderMead, type NelderMeadOptions } from '../../models/numerics/bounded-nelder-mead.ts';
import { lcg } from './lcg.ts';

function plainNelderMead(f: (x: Float64Array) => number, start: Float64Array, { lower, upper }: NelderMeadOptions) {
  const n = start.length;
  const [gamma, rho, sigma] = [1 + 2 / n, 0.75 - 1 / (2 * n), 1 - 1 / n];
  const clamp = (x: Float64Array) => x.map((v, i) => Math.min(Math.max(v, lower[i]), upper[i]));
  const simplex: Float64Array[] = Array.from({ length: n + 1 }, () => clamp(Float64Array.from(start)));
  for (let i = 0; i < n; i++) simplex[i][i] = Math.min(Math.max(simplex[i][i] === 0 ? 1e-4 : simplex[i][i] * 1.05, lower[i]), upper[i]);
  const values = simplex.map(f);
  const order = simplex.map((_, i) => i);
  const centroid = new Float64Array(n);
  const along = (t: number, to: Float64Array) => clamp(centroid.map((c, j) => c + t * (to[j] - c)));
  let best = 0;
  for (let iter = 0; iter < 1000; iter++) {
    order.sort((a, b) => values[a] - values[b]);
    [best] = order;
    const [worst, second] = [order[n], order[n - 1]];
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    if (Math.sqrt(values.reduce((s, v) => s + (v - mean) * (v - mean), 0) / values.length) < 1e-4) break;
    for (let j = 0; j < n; j++) {
      let sum = simplex[0][j];
      let i = 1;
      if (n + 1 >= 5) for (; i + 3 < n + 1; i += 4) sum += simplex[i][j] + simplex[i + 1][j] + (simplex[i + 2][j] + simplex[i + 3][j]);
      for (; i < n + 1; i++) sum += simplex[i][j];
      centroid[j] = (sum - simplex[worst][j]) / n;
    }
    const set = (x: Float64Array, v: number) => ((simplex[worst] = x), (values[worst] = v));
    const r = along(-1, simplex[worst]);
    const fr = f(r);
    if (values[best] <= fr && fr < values[second]) set(r, fr);
    else if (fr < values[best]) {
      const e = along(gamma, r);
      const fe = f(e);
      if (fe < fr) set(e, fe);
      else set(r, fr);
    } else {
      const c = along(values[second] <= fr && fr < values[worst] ? rho : -rho, r);
      const fc = f(c);
      if (values[second] <= fr && fr < values[worst] ? fc <= fr : fc < values[worst]) set(c, fc);
      else
        for (let i = 0; i <= n; i++) {
          if (i === best) continue;
          simplex[i] = clamp(simplex[i].map((v, j) => simplex[best][j] + sigma * (v - simplex[best][j])));
          values[i] = f(simplex[i]);
        }
    }
  }
  return simplex[best];
}

describe('bounded Nelder-Mead', () => {
  it('sorts indices by value exactly as V8 does, ties, infinities and NaN included', () => {
    const next = lcg(7);
    const pool = [0, 1, 1, 2, -3, Infinity, Infinity, -Infinity, NaN, 0.5];
    for (let trial = 0; trial < 3000; trial++) {
      const length = 1 + Math.floor(next() * 63);
      const values = Float64Array.from({ length }, () => (next() < 0.5 ? pool[Math.floor(next() * pool.length)] : Math.round(next() * 8)));
      // The search's case (sorted but for the last index) and arbitrary orders.
      const order = Array.from({ length }, (_, i) => i).sort((a, b) => values[a] - values[b]);
      if (trial % 2) order.sort(() => next() - 0.5);
      else values[order[length - 1]] = pool[trial % pool.length];
      const expected = [...order].sort((a, b) => values[a] - values[b]);
      insertionSortAsV8(order, values);
      expect(order).toEqual(expected);
    }
  });

  const box = (n: number, lo: number, hi: number) => ({ lower: new Float64Array(n).fill(lo), upper: new Float64Array(n).fill(hi) });
  const cases: [string, number, (x: Float64Array) => number, NelderMeadOptions][] = [
    ['a 57-parameter quadratic in a box', 57, (x) => x.reduce((s, v, i) => s + (i + 1) * (v - Math.sin(i)) ** 2, 0), box(57, -0.5, 0.5)],
    // ETS-like: a region where the objective is +Infinity (many ties), and a floor of -1e10.
    [
      'an objective with an infeasible region and ties',
      30,
      (x) =>
        x[0] + x[1] > 0.9
          ? Infinity
          : Math.max(
              -1e10,
              x.reduce((s, v) => s + Math.abs(v - 0.3), 0),
            ),
      box(30, 0, 1),
    ],
    ['a small problem (rows summed in order)', 3, (x) => (x[0] - 1) ** 2 + 10 * (x[1] - x[0] ** 2) ** 2 + x[2] ** 2, box(3, -2, 2)],
  ];
  for (const [name, n, f, options] of cases) {
    it(`takes the plain algorithm's path bit for bit: ${name}`, () => {
      const next = lcg(n);
      const start = Float64Array.from({ length: n }, () => next() * 0.4);
      expect(Array.from(nelderMead(f, start, options).x)).toEqual(Array.from(plainNelderMead(f, start, options)));
    });
  }
});
