import { rng } from '../../numerics/random.ts';

/**
 * Features bucketed once into at most `maxBins` bins by their quantiles (the histograms the trees
 * grow from count bins, not values). Missing values (NaN) have a bin of their own below every
 * number, so a split can set them apart.
 */

/** Rows of features, row-major: `values[row * features + feature]`. */
export interface Matrix {
  readonly rows: number;
  readonly features: number;
  readonly values: Float64Array;
}

/** Per feature, ascending upper edges: a value v falls in bin 1 + #(edges < v); NaN in bin 0. */
export interface Bins {
  readonly edges: Float64Array[];
}

export function fitBins(x: Matrix, maxBins: number, seed: number): Bins {
  const sampleSize = Math.min(x.rows, 30_000);
  const random = rng(seed ^ 0x9e3779b9);
  const rows =
    sampleSize === x.rows ? Uint32Array.from({ length: x.rows }, (_, i) => i) : Uint32Array.from({ length: sampleSize }, () => Math.floor(random() * x.rows));
  const edges: Float64Array[] = [];
  const column = new Float64Array(rows.length);
  for (let f = 0; f < x.features; f++) {
    let n = 0;
    for (const r of rows) {
      const v = x.values[r * x.features + f];
      if (!Number.isNaN(v)) column[n++] = v;
    }
    const sorted = column.subarray(0, n).slice().sort();
    const distinct: number[] = [];
    for (let i = 0; i < n; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) distinct.push(sorted[i]);
    const cuts: number[] = [];
    const numeric = maxBins - 1;
    if (distinct.length <= numeric) {
      for (let i = 0; i + 1 < distinct.length; i++) cuts.push((distinct[i] + distinct[i + 1]) / 2);
    } else {
      for (let b = 1; b < numeric; b++) {
        const v = sorted[Math.floor((b * n) / numeric)];
        const prev = sorted[Math.floor((b * n) / numeric) - 1];
        const cut = (v + prev) / 2;
        if (v !== prev && (cuts.length === 0 || cut > cuts[cuts.length - 1])) cuts.push(cut);
      }
    }
    edges.push(Float64Array.from(cuts));
  }
  return { edges };
}

function binOf(edges: Float64Array, v: number): number {
  if (Number.isNaN(v)) return 0;
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (edges[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

export function applyBins(x: Matrix, bins: Bins): Uint8Array {
  const out = new Uint8Array(x.rows * x.features);
  for (let r = 0; r < x.rows; r++) {
    const base = r * x.features;
    for (let f = 0; f < x.features; f++) out[base + f] = binOf(bins.edges[f], x.values[base + f]);
  }
  return out;
}

/** A matrix bucketed once, so that several fits on subsets of its rows share the work. */
export interface BinnedMatrix {
  readonly rows: number;
  readonly features: number;
  readonly bins: Bins;
  readonly binned: Uint8Array;
}

export function binMatrix(x: Matrix, maxBins: number, seed: number): BinnedMatrix {
  const bins = fitBins(x, maxBins, seed);
  return { rows: x.rows, features: x.features, bins, binned: applyBins(x, bins) };
}
