/**
 * `TabPFNRegressor`'s preparation of a feature table (tabpfn 6.4.1, v2 inference configuration), in
 * TypeScript because it is fitted to each table; the graph (tools/export/tabpfn_ts.py) starts where
 * the members' tables are ready. `fit`'s cleaning (modalities, ordinal codes, the standardised
 * target), then per ensemble member its "quantile_uni" or "safepower" pipeline, the fingerprint
 * column and the seeded column shuffle. Step by step: docs/foundation-models.md, "`tabpfn-ts`".
 */
import { ModelInputError } from '../../contract/model-interface.ts';
import type { FeatureTable } from './tabicl-features.ts';
import { NumpyGenerator } from './tabpfn-ts-random.ts';
import { applySafePower, fingerprint, fitSafePower, quantileUniform, svdFeatures, type Column, type PowerScaler } from './tabpfn-ts-transforms.ts';

export interface MemberConfig {
  readonly preprocessing: 'quantile_uni' | 'safepower';
  readonly target: 'none' | 'safepower';
  readonly seed: number;
}

/** The regressor's input after `fit`'s cleaning: numeric columns, categorical flags, the standardised target. */
export interface RegressorInput {
  readonly columns: Column[];
  readonly categorical: boolean[];
  readonly train: number;
  readonly rows: number;
  /** Standardised training targets. */
  readonly y: Float64Array;
  readonly yMean: number;
  readonly yStd: number;
  /** The training target's single value, when it has only one (the reference then answers it everywhere). */
  readonly constant: number | null;
}

export interface MemberTable {
  /** Row-major [rows][width], float32 as the network reads it. */
  readonly features: Float32Array;
  readonly width: number;
  readonly targets: Float32Array;
  /** The target transform, whose inverse maps the standard borders (tabpfn-ts-bars.ts). */
  readonly targetTransform: PowerScaler | null;
}

const MAX_UNIQUE_FOR_CATEGORY = 30;
/** `PreprocessorConfig.max_features_per_estimator`: past it the reference draws a random subset per member (not implemented). */
const MAX_FEATURES_PER_ESTIMATOR = 500;
const MIN_UNIQUE_FOR_NUMERICAL = 4;
const MIN_SAMPLES_FOR_INFERENCE = 100;
/** `NA_PLACEHOLDER`: missing text, sorted among the categories by the ordinal encoder. */
const NA_PLACEHOLDER = '__MISSING__';

/** Distinct values, NaN counted once (pandas `nunique(dropna=False)`). */
function distinct(values: ArrayLike<number>, n: number): number[] {
  const set = new Set<number>();
  for (let i = 0; i < n; i++) set.add(values[i]); // a Set holds one NaN
  return [...set];
}

export function regressorInput(table: FeatureTable, model: string): RegressorInput {
  const { rows, columns: width, features, targets, text } = table;
  const train = targets.length;
  const columns: Column[] = [];
  const categorical: boolean[] = [];
  for (let c = 0; c < width; c++) {
    const raw = Float64Array.from({ length: rows }, (_, r) => features[r * width + c]);
    const strings = text.get(c);
    if (strings) {
      const known = new Set(strings.slice(0, train).map((s) => s ?? NA_PLACEHOLDER));
      if (known.size > MAX_UNIQUE_FOR_CATEGORY && known.size > 1)
        throw new ModelInputError(
          `${model} takes text covariates of at most ${MAX_UNIQUE_FOR_CATEGORY} distinct values over the history (the reference treats more as free text)`,
        );
      // OrdinalEncoder: sorted categories; unknown in the horizon -1; missing NaN.
      const order = [...known].sort();
      columns.push(Float64Array.from(strings, (s) => (s === null ? NaN : order.indexOf(s))));
      categorical.push(known.size > 1);
      continue;
    }
    const unique = distinct(raw, train);
    const isCategorical = train > MIN_SAMPLES_FOR_INFERENCE && unique.length > 1 && unique.length < MIN_UNIQUE_FOR_NUMERICAL;
    if (isCategorical) {
      // fix_dtypes makes it a pandas category, which the ordinal encoder codes by sorted value.
      const order = unique.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
      columns.push(raw.map((v) => (Number.isNaN(v) ? NaN : order.indexOf(v))));
    } else columns.push(raw);
    categorical.push(isCategorical);
  }
  let mean = 0;
  for (const v of targets) mean += v;
  mean /= train;
  let variance = 0;
  for (const v of targets) variance += (v - mean) ** 2;
  const std = Math.sqrt(variance / train) + 1e-20;
  const constant = new Set(targets).size === 1 ? targets[0] : null;
  return { columns, categorical, train, rows, y: targets.map((v) => (v - mean) / std), yMean: mean, yStd: std, constant };
}

/** `OrdinalEncoder` codes of the training categories (sorted), then a shuffled mapping of them. */
function shuffledOrdinal(x: Column, train: number, rng: NumpyGenerator): Column {
  const cats = distinct(x, train)
    .filter((v) => !Number.isNaN(v))
    .sort((a, b) => a - b);
  const hasNaN = Array.from(x.subarray(0, train)).some(Number.isNaN);
  const perm = rng.permutation(cats.length + (hasNaN ? 1 : 0));
  return x.map((v) => {
    const code = cats.indexOf(v);
    return Number.isNaN(v) || code < 0 ? NaN : perm[code];
  });
}

/** Least common category count and number of categories over the training rows (np.unique). */
function categoryCounts(x: Column, train: number): { least: number; count: number } {
  const counts = new Map<number, number>();
  for (let i = 0; i < train; i++) counts.set(x[i], (counts.get(x[i]) ?? 0) + 1);
  return { least: Math.min(...counts.values()), count: counts.size };
}

/** `OneHotEncoder(drop="if_binary", handle_unknown="ignore")` of one column: its output columns. */
function oneHot(x: Column, train: number): Column[] {
  const known = distinct(x, train).filter((v) => !Number.isNaN(v));
  known.sort((a, b) => a - b);
  const hasNaN = Array.from(x.subarray(0, train)).some(Number.isNaN);
  const cats: number[] = [...known, ...(hasNaN ? [NaN] : [])];
  const same = (v: number, c: number): boolean => (Number.isNaN(c) ? Number.isNaN(v) : v === c);
  const kept = cats.length === 2 ? cats.slice(1) : cats;
  return kept.map((c) => x.map((v) => (same(v, c) ? 1 : 0)));
}

/**
 * One member's table: the package's preprocessing pipeline fitted on the training rows.
 * `fingerprint` replaces the computed fingerprint column (training then test rows): the tests
 * feed in the reference's own, which hashes the reference's float values to 12 decimals, so that
 * it differs wherever numpy's math library rounds a last bit differently from JavaScript's (and
 * from numpy on another CPU).
 */
export function memberTable(input: RegressorInput, member: MemberConfig, model: string, fingerprintColumn?: Column): MemberTable {
  const { train, rows } = input;
  // RemoveConstantFeaturesStep: a column whose training rows all equal the first (NaN never equals).
  const keep = input.columns.map((c) => {
    for (let r = 1; r < train; r++) if (!(c[r] === c[0])) return true;
    return Number.isNaN(c[0]) && train > 0;
  });
  if (!keep.some(Boolean)) throw new ModelInputError(`${model} cannot forecast from a history whose every feature is constant (the reference refuses it)`);
  const columns = input.columns.filter((_, c) => keep[c]);
  if (columns.length > MAX_FEATURES_PER_ESTIMATOR)
    throw new ModelInputError(`${model} takes at most ${MAX_FEATURES_PER_ESTIMATOR} non-constant feature columns (the reference subsamples more per member)`);
  const isCat = input.categorical.filter((_, c) => keep[c]);
  let out: Column[];
  if (member.preprocessing === 'quantile_uni') {
    out = [...columns, ...columns.filter((_, c) => !isCat[c]).map((c) => quantileUniform(c, train))];
    // ordinal_very_common_categories_shuffled: categories seen at least 10 times each, fewer than rows / 10 of them, moved first.
    const rng = new NumpyGenerator(member.seed);
    const encoded = isCat.flatMap((cat, c) => {
      if (!cat) return [];
      const { least, count } = categoryCounts(out[c], train);
      return least >= 10 && count < Math.floor(train / 10) ? [c] : [];
    });
    out = [...encoded.map((c) => shuffledOrdinal(out[c], train, rng)), ...out.filter((_, c) => !encoded.includes(c))];
    out = [...out, ...svdFeatures(out, train)];
  } else {
    const cats = columns.filter((_, c) => isCat[c]);
    const numeric = columns.filter((_, c) => !isCat[c]).map((c) => applySafePower(fitSafePower(c, train), c));
    out = [...cats.flatMap((c) => oneHot(c, train)), ...numeric];
  }
  out.push(fingerprintColumn ?? fingerprint(out, train));
  const order = new NumpyGenerator(member.seed).permutation(out.length);
  const width = out.length;
  const features = new Float32Array(rows * width);
  order.forEach((from, to) => {
    const c = out[from];
    for (let r = 0; r < rows; r++) features[r * width + to] = c[r];
  });
  let targets = input.y;
  let targetTransform: PowerScaler | null = null;
  if (member.target === 'safepower') {
    targetTransform = fitSafePower(input.y, train);
    targets = applySafePower(targetTransform, input.y);
  }
  return { features, width, targets: Float32Array.from(targets), targetTransform };
}
