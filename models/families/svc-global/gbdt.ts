/**
 * Gradient-boosted regression trees on histograms, in the manner of LightGBM (Ke et al., 2017):
 * features bucketed once into at most 255 bins by their quantiles, trees grown leaf-wise from
 * per-leaf gradient histograms (a child's histogram is its parent's minus its sibling's), squared
 * loss. Missing values (NaN) have a bin below every number, so a split can set them apart; at
 * prediction time they go left, as in training.
 */

import type { BinnedMatrix } from './binning.ts';
import { rng } from '../../numerics/random.ts';
import { leafOfBinned, type Booster, type Tree } from './trees.ts';

export interface GbdtParams {
  /** Leaves per tree. */
  readonly numLeaves: number;
  readonly maxDepth: number;
  readonly learningRate: number;
  /** Boosting rounds at most; early stopping may end sooner. */
  readonly rounds: number;
  readonly minDataInLeaf: number;
  /** L2 penalty on leaf values. */
  readonly lambda: number;
  /** Share of features each tree may split on. */
  readonly featureFraction: number;
  /** Share of rows each tree is grown on. */
  readonly baggingFraction: number;
  readonly maxBins: number;
  /** Stop when the validation loss has not improved for this many rounds. */
  readonly earlyStoppingRounds: number;
  readonly seed: number;
}

export const DEFAULT_PARAMS: GbdtParams = {
  numLeaves: 31,
  maxDepth: 10,
  learningRate: 0.08,
  rounds: 300,
  minDataInLeaf: 40,
  lambda: 1,
  featureFraction: 0.8,
  baggingFraction: 0.6,
  maxBins: 63,
  earlyStoppingRounds: 25,
  seed: 1,
};

interface Split {
  gain: number;
  feature: number;
  bin: number;
  leftGrad: number;
  leftCount: number;
}

const EMPTY = new Float64Array(0);

interface Leaf {
  /** The leaf's rows in this round's bag are bagged[begin, end) (`count` of them), the others outOfBag[outBegin, outEnd). */
  begin: number;
  end: number;
  outBegin: number;
  outEnd: number;
  count: number;
  depth: number;
  grad: number;
  /** Per feature and bin, the gradients' sum and the rows' count side by side: one cache line for both. */
  hist: Float64Array;
  split: Split | null;
  /** Where this leaf hangs: parent node and side, or -1 for the root. */
  parent: number;
  isLeft: boolean;
}

export interface FitResult {
  readonly booster: Booster;
  /** Rounds kept (the best validation round when validation rows are given). */
  readonly rounds: number;
  /** Validation mean squared error per round, when validated. */
  readonly validationLoss: number[];
}

/**
 * Fits y on the `train` rows of x. With `valid` rows, boosting stops once their loss has not
 * improved for `earlyStoppingRounds` rounds, and the model keeps its best round.
 */
export function fitGbdt(data: BinnedMatrix, y: Float64Array, train: Uint32Array, params: GbdtParams, valid?: Uint32Array): FitResult {
  const n = train.length;
  const F = data.features;
  const B = params.maxBins;
  const { bins, binned } = data;
  const random = rng(params.seed);

  let base = 0;
  for (let i = 0; i < n; i++) base += y[train[i]];
  base = n > 0 ? base / n : 0;
  // Predictions and gradients are kept for every row of the matrix; only train rows are used.
  const pred = new Float64Array(data.rows).fill(base);
  const grad = new Float64Array(data.rows);

  const trees: Tree[] = [];
  const validationLoss: number[] = [];
  let best = Infinity;
  let bestRounds = 0;
  // Every train row, partitioned by leaf and kept ascending inside each leaf (stable partition)
  // so that histogram passes read the matrix in order. This round's bag and the rows out of it
  // are kept apart: histograms read only the bag, and every row's prediction moves by its leaf.
  const bagged = new Uint32Array(n);
  const outOfBag = new Uint32Array(n);
  const spare = new Uint32Array(n);
  // The bins feature by feature too: a partition reads one feature of ascending rows, close
  // together there, where the row-major matrix has them a row's width apart.
  const rowCount = data.rows;
  const byFeature = new Uint8Array(binned.length);
  for (let r = 0; r < rowCount; r++) for (let f = 0; f < F; f++) byFeature[f * rowCount + r] = binned[r * F + f];
  /** Stable partition of rows[begin, end) by the split: left rows first; returns where the right ones start. */
  const partition = (rows: Uint32Array, begin: number, end: number, feature: number, bin: number): number => {
    let i = begin;
    let spill = 0;
    const column = feature * rowCount;
    for (let k = begin; k < end; k++) {
      const r = rows[k];
      // Both writes, one kept: the side is as good as random, and a branch on it mispredicts.
      const left = 1 - ((bin - byFeature[column + r]) >>> 31);
      rows[i] = r;
      spare[spill] = r;
      i += left;
      spill += 1 - left;
    }
    rows.set(spare.subarray(0, spill), i);
    return i;
  };
  const lambda = params.lambda;
  const minData = params.minDataInLeaf;

  const histSize = 2 * F * B;
  const pool: Float64Array[] = [];
  const takeHist = (): Float64Array => pool.pop()?.fill(0) ?? new Float64Array(histSize);
  const buildHist = (leaf: Leaf, offsets: Int32Array, features: Int32Array) => {
    const h = takeHist();
    const nf = features.length;
    for (let k = leaf.begin; k < leaf.end; k++) {
      const r = bagged[k];
      const gr = grad[r];
      const rowBase = r * F;
      for (let j = 0; j < nf; j++) {
        const at = offsets[j] + 2 * binned[rowBase + features[j]];
        h[at] += gr;
        h[at + 1] += 1;
      }
    }
    leaf.hist = h;
  };
  const findSplit = (leaf: Leaf, features: Int32Array): Split | null => {
    const count = leaf.count;
    if (count < 2 * minData || leaf.depth >= params.maxDepth) return null;
    const parentScore = (leaf.grad * leaf.grad) / (count + lambda);
    let bestSplit: Split | null = null;
    const h = leaf.hist;
    for (const f of features) {
      let gl = 0;
      let cl = 0;
      const nb = bins.edges[f].length + 1;
      const o = 2 * f * B;
      for (let b = 0; b < nb; b++) {
        gl += h[o + 2 * b];
        cl += h[o + 2 * b + 1];
        if (cl < minData) continue;
        const cr = count - cl;
        if (cr < minData) break;
        const gr = leaf.grad - gl;
        const gain = (gl * gl) / (cl + lambda) + (gr * gr) / (cr + lambda) - parentScore;
        if (gain > 1e-12 && (!bestSplit || gain > bestSplit.gain)) bestSplit = { gain, feature: f, bin: b, leftGrad: gl, leftCount: cl };
      }
    }
    return bestSplit;
  };

  for (let round = 0; round < params.rounds; round++) {
    // Bagging: this round's rows; gradients of the squared loss.
    let m = 0;
    let out = 0;
    let g0 = 0;
    for (let i = 0; i < n; i++) {
      const r = train[i];
      const inBag = params.baggingFraction >= 1 || random() < params.baggingFraction;
      const g = pred[r] - y[r];
      grad[r] = g;
      if (inBag) {
        bagged[m++] = r;
        g0 += g;
      } else outOfBag[out++] = r;
    }
    // Feature fraction: this round's features.
    const chosen: number[] = [];
    for (let f = 0; f < F; f++) if (random() < params.featureFraction) chosen.push(f);
    if (chosen.length === 0) chosen.push(Math.floor(random() * F));
    const features = Int32Array.from(chosen);
    const offsets = Int32Array.from(chosen, (f) => 2 * f * B);

    const root: Leaf = { begin: 0, end: m, outBegin: 0, outEnd: out, count: m, depth: 0, grad: g0, hist: EMPTY, split: null, parent: -1, isLeft: false };
    buildHist(root, offsets, features);
    root.split = findSplit(root, features);
    const leaves: Leaf[] = [root];
    const feature: number[] = [];
    const splitBin: number[] = [];
    const threshold: number[] = [];
    const left: number[] = [];
    const right: number[] = [];

    while (leaves.length < params.numLeaves) {
      let pick = -1;
      for (let l = 0; l < leaves.length; l++) if (leaves[l].split && (pick < 0 || leaves[l].split!.gain > leaves[pick].split!.gain)) pick = l;
      if (pick < 0) break;
      const leaf = leaves[pick];
      const s = leaf.split!;
      // Stable partitions of the leaf's rows: left rows first, both parts still ascending.
      const i = partition(bagged, leaf.begin, leaf.end, s.feature, s.bin);
      const o = partition(outOfBag, leaf.outBegin, leaf.outEnd, s.feature, s.bin);
      const node = feature.length;
      feature.push(s.feature);
      splitBin.push(s.bin);
      threshold.push(s.bin === 0 ? -Infinity : bins.edges[s.feature][s.bin - 1]);
      left.push(0);
      right.push(0);
      if (leaf.parent >= 0) (leaf.isLeft ? left : right)[leaf.parent] = node;
      const l: Leaf = {
        begin: leaf.begin,
        end: i,
        outBegin: leaf.outBegin,
        outEnd: o,
        count: s.leftCount,
        depth: leaf.depth + 1,
        grad: s.leftGrad,
        hist: EMPTY,
        split: null,
        parent: node,
        isLeft: true,
      };
      const r: Leaf = {
        begin: i,
        end: leaf.end,
        outBegin: o,
        outEnd: leaf.outEnd,
        count: leaf.count - s.leftCount,
        depth: leaf.depth + 1,
        grad: leaf.grad - s.leftGrad,
        hist: EMPTY,
        split: null,
        parent: node,
        isLeft: false,
      };
      const [small, large] = l.count <= r.count ? [l, r] : [r, l];
      buildHist(small, offsets, features);
      // The larger child's histogram is the parent's minus the smaller's, in the parent's arrays.
      large.hist = leaf.hist;
      for (const f of features) for (let b = 2 * f * B, e = b + 2 * B; b < e; b++) large.hist[b] -= small.hist[b];
      l.split = findSplit(l, features);
      r.split = findSplit(r, features);
      leaves.splice(pick, 1, l, r);
    }
    // Leaf values, and children pointers to leaves.
    const leafValue = new Float64Array(leaves.length);
    leaves.forEach((leaf, k) => {
      leafValue[k] = (-params.learningRate * leaf.grad) / (leaf.count + lambda);
      if (leaf.parent >= 0) (leaf.isLeft ? left : right)[leaf.parent] = ~k;
      pool.push(leaf.hist);
    });
    const tree: Tree = {
      feature: Int32Array.from(feature),
      splitBin: Int32Array.from(splitBin),
      threshold: Float64Array.from(threshold),
      left: Int32Array.from(left),
      right: Int32Array.from(right),
      leafValue,
    };
    trees.push(tree);
    // Every train row knows its leaf from the partition.
    leaves.forEach((leaf, k) => {
      const v = leafValue[k];
      for (let q = leaf.begin; q < leaf.end; q++) pred[bagged[q]] += v;
      for (let q = leaf.outBegin; q < leaf.outEnd; q++) pred[outOfBag[q]] += v;
    });
    if (valid && valid.length > 0) {
      let loss = 0;
      for (const r of valid) {
        pred[r] += leafValue[leafOfBinned(tree, binned, r * F)];
        const e = pred[r] - y[r];
        loss += e * e;
      }
      loss /= valid.length;
      validationLoss.push(loss);
      if (loss < best - 1e-12) {
        best = loss;
        bestRounds = trees.length;
      } else if (trees.length - bestRounds >= params.earlyStoppingRounds) break;
    }
  }
  const rounds = valid && valid.length > 0 ? Math.max(1, bestRounds) : trees.length;
  return { booster: { base, trees: trees.slice(0, rounds), features: F }, rounds, validationLoss };
}
