/** The trees a booster is made of, and how a row finds its leaf in them (missing values go left). */

/**
 * A tree as flat arrays. Internal node i: rows with `bin <= splitBin[i]` (value <= threshold[i],
 * or NaN) go to `left[i]`, others to `right[i]`; a child index < 0 is the leaf ~child.
 */
export interface Tree {
  readonly feature: Int32Array;
  readonly splitBin: Int32Array;
  readonly threshold: Float64Array;
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly leafValue: Float64Array;
}

export interface Booster {
  readonly base: number;
  readonly trees: Tree[];
  readonly features: number;
}

export function predictRow(model: Booster, x: Float64Array, offset = 0, trees = model.trees.length): number {
  let sum = model.base;
  for (let t = 0; t < trees; t++) {
    const tree = model.trees[t];
    let node = 0;
    if (tree.feature.length === 0) {
      sum += tree.leafValue[0];
      continue;
    }
    for (;;) {
      const v = x[offset + tree.feature[node]];
      const next = Number.isNaN(v) || v <= tree.threshold[node] ? tree.left[node] : tree.right[node];
      if (next < 0) {
        sum += tree.leafValue[~next];
        break;
      }
      node = next;
    }
  }
  return sum;
}

export function leafOfBinned(tree: Tree, bins: Uint8Array, base: number): number {
  if (tree.feature.length === 0) return 0;
  let node = 0;
  for (;;) {
    const next = bins[base + tree.feature[node]] <= tree.splitBin[node] ? tree.left[node] : tree.right[node];
    if (next < 0) return ~next;
    node = next;
  }
}
