/**
 * Loader for the hierarchical sets shipped in datasets/hierarchical/ (see datasets/README.md):
 * fpp2's `prison` (state x gender x legal status, a grouped structure) and `visnights` (zones
 * within states, a tree), quarterly, in long format. Returns the bottom series with their
 * identifier values and the levels the set's structure has, as kept identifier sets; a file whose
 * series do not all cover the same quarters, in order, is rejected.
 */
import { readFileSync } from 'node:fs';

export type HierarchicalName = 'prison' | 'visnights';

export const HIERARCHICAL_NAMES: readonly HierarchicalName[] = ['prison', 'visnights'];

export interface HierarchicalSet {
  readonly name: HierarchicalName;
  /** Identifier columns, coarsest first. */
  readonly identifiers: readonly string[];
  /** The structure's levels, each as the identifiers it keeps: every subset for a grouped set, the chain for a tree. */
  readonly levels: readonly (readonly string[])[];
  readonly seasonLength: number;
  /** Quarter labels (`2005-Q1`), shared by every series. */
  readonly quarters: readonly string[];
  readonly bottoms: readonly { readonly ids: readonly string[]; readonly values: Float64Array }[];
}

const LAYOUT: Record<HierarchicalName, { identifiers: string[]; value: string; grouped: boolean }> = {
  prison: { identifiers: ['state', 'gender', 'legal'], value: 'count', grouped: true },
  visnights: { identifiers: ['state', 'zone'], value: 'nights', grouped: false },
};

export function hierarchicalPath(name: HierarchicalName): string {
  return new URL(`./hierarchical/${name}.csv`, import.meta.url).pathname;
}

export function loadHierarchical(name: HierarchicalName): HierarchicalSet {
  const layout = LAYOUT[name];
  if (!layout) throw new Error(`unknown hierarchical set "${String(name)}"; expected one of ${HIERARCHICAL_NAMES.join(', ')}`);
  const path = hierarchicalPath(name);
  const [header, ...lines] = readFileSync(path, 'utf8').trim().split('\n');
  const expected = [...layout.identifiers, 'quarter', layout.value].join(',');
  if (header !== expected) throw new Error(`${path}: header "${header}"; expected ${expected}`);
  const series = new Map<string, { ids: string[]; quarters: string[]; values: number[] }>();
  for (const line of lines) {
    const fields = line.split(',');
    const ids = fields.slice(0, layout.identifiers.length);
    const key = ids.join('\u0000');
    const s = series.get(key) ?? series.set(key, { ids, quarters: [], values: [] }).get(key)!;
    s.quarters.push(fields[layout.identifiers.length]);
    s.values.push(Number(fields[layout.identifiers.length + 1]));
  }
  const all = [...series.values()];
  const quarters = all[0].quarters;
  for (const s of all) {
    if (s.quarters.join() !== quarters.join()) throw new Error(`${path}: series ${s.ids.join('/')} does not cover the quarters the first series covers`);
    if (!s.values.every(Number.isFinite)) throw new Error(`${path}: series ${s.ids.join('/')} has a value that is not a number`);
  }
  const ids = layout.identifiers;
  const levels = layout.grouped
    ? Array.from({ length: 2 ** ids.length }, (_, m) => ids.filter((_, i) => (m & (1 << i)) !== 0))
    : ids.map((_, k) => ids.slice(0, k)).concat([ids]);
  return {
    name,
    identifiers: ids,
    levels: levels.sort((x, y) => x.length - y.length),
    seasonLength: 4,
    quarters,
    bottoms: all.map((s) => ({ ids: s.ids, values: Float64Array.from(s.values) })),
  };
}
