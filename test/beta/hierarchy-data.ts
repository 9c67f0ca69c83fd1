/**
 * Hierarchical uploads for the reconciliation tests, written by DuckDB: a three-level tree
 * (region > store > sku, 12 bottoms) and a grouped structure (stores crossed with categories),
 * 56 daily steps of positive values in hundredths with a weekly pattern. And the check every
 * reconciled answer must pass: each aggregate equals the sum of the bottoms under it. The values
 * are fractional on purpose: roll-ups add them exactly (decision 065), in no order, so a job and
 * the synchronous call see the same data to the bit, which the jobs' tests compare.
 */

/** region > store > sku: 2 regions, 2 stores each, skus a, b and c in every store. */
export const TREE = `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS day, region, store, sku,
         round(100 * (20 + 5 * (hash(region || store || sku) % 7)::DOUBLE + 4 * sin(2 * pi() * d / 7)
               + ((d * 37 + hash(sku || store) % 11) % 9)::DOUBLE / 2 + d * 0.1)) / 100 AS units
  FROM range(56) r(d), (VALUES ('north', 'n1'), ('north', 'n2'), ('south', 's1'), ('south', 's2')) s(region, store), (VALUES ('a'), ('b'), ('c')) k(sku)`;

/** Stores (in regions) crossed with skus (in categories): two hierarchies, so the levels cross. */
export const GROUPED = `
  SELECT day, region, store, CASE WHEN sku = 'c' THEN 'dry' ELSE 'fresh' END AS category, sku, units FROM (${TREE})`;

/** Two weekly cutoffs with a week of actuals after each. */
export const treeQuery = (extra: Record<string, unknown> = {}, input: Record<string, unknown> = {}) => ({
  input: {
    source: { uri: 'inline://sales' },
    columns: {
      day: { kind: 'time', frequency: '1d' },
      region: 'identifier',
      store: 'identifier',
      sku: 'identifier',
      units: { kind: 'target', aggregate: 'sum' },
    },
    hierarchies: { sku: [['store', 'region']] },
    ...input,
  },
  prediction_length: '7d',
  cutoff: [{ every: '7d', start: '2024-02-11', end: '2024-02-18' }],
  quantiles: [0.1, 0.9],
  ...extra,
});

export const groupedInput = {
  columns: {
    day: { kind: 'time', frequency: '1d' },
    region: 'identifier',
    store: 'identifier',
    category: 'identifier',
    sku: 'identifier',
    units: { kind: 'target', aggregate: 'sum' },
  },
  hierarchies: { store: [['region']], sku: [['category']] },
};

/** One forecast row: its identifier values (null where aggregated away), where it is (cutoff and time), its mean. */
export interface MeanRow {
  ids: (string | null)[];
  at: string;
  mean: number;
}

/** The largest relative gap between an aggregate's mean and the sum of its bottoms' means; and how many aggregates were checked. */
export function incoherence(rows: readonly MeanRow[]): { worst: number; aggregates: number } {
  const bottoms = rows.filter((r) => r.ids.every((v) => v !== null));
  let worst = 0;
  let aggregates = 0;
  for (const row of rows) {
    if (row.ids.every((v) => v !== null)) continue;
    const under = bottoms.filter((b) => b.at === row.at && row.ids.every((v, i) => v === null || v === b.ids[i]));
    if (under.length === 0) throw new Error(`no bottom under ${row.ids.join('/')} at ${row.at}`);
    const sum = under.reduce((s, b) => s + b.mean, 0);
    worst = Math.max(worst, Math.abs(row.mean - sum) / Math.max(1, Math.abs(sum)));
    aggregates++;
  }
  return { worst, aggregates };
}
