import { ReconciliationError } from './reconciliation-error.ts';

/**
 * The summing structure of a hierarchy, kept sparse: each aggregate row lists the bottom series
 * it sums, each bottom lists the aggregates it belongs to. No dense summing matrix exists, so a
 * hierarchy of tens of thousands of bottoms costs memory in proportion to its links.
 *
 * It is built from what the beta schema logic produces (engine/beta/prepare.ts): series with one
 * value per identifier, null where the series' level aggregates that identifier away. Series
 * with no null are the bottoms. Rows are ordered levels first to last (the coarsest level first,
 * the bottoms last), series in input order within a level; every result is handed back in input
 * order, so callers never see the row order.
 */

export interface SeriesIdentity {
  /** One value per identifier; null where this series' level aggregates the identifier away. */
  readonly ids: readonly (string | null)[];
}

export interface HierarchyLevel {
  /** The identifiers this level keeps, in identifier order. */
  readonly kept: readonly string[];
  /** DuckDB's GROUPING() mask, as engine/beta/hierarchy.ts: bit (n-1-i) set when identifier i is aggregated away. */
  readonly mask: number;
  /** This level's rows. */
  readonly rows: Int32Array;
}

export interface HierarchyStructure {
  readonly identifiers: readonly string[];
  /** Aggregate rows are 0 .. aggregateCount-1; bottom b is row aggregateCount + b. */
  readonly aggregateCount: number;
  readonly bottomCount: number;
  readonly rowCount: number;
  /** The input position of each row, and the row of each input position. */
  readonly seriesOfRow: Int32Array;
  readonly rowOfSeries: Int32Array;
  /** Bottoms summed by aggregate j: members[memberStart[j] .. memberStart[j+1]). */
  readonly memberStart: Int32Array;
  readonly members: Int32Array;
  /** Aggregates containing bottom b: ancestors[ancestorStart[b] .. ancestorStart[b+1]). */
  readonly ancestorStart: Int32Array;
  readonly ancestors: Int32Array;
  /** Coarsest first, bottoms last. */
  readonly levels: readonly HierarchyLevel[];
  readonly levelOfRow: Int32Array;
  /**
   * A strict tree (or a forest: several roots): the levels nest one in the next, so every series
   * below the first level has exactly one parent in the level above. Otherwise grouped (crossed).
   */
  readonly isTree: boolean;
  /** Tree only: each row's parent row, -1 for the first level's rows. Null when grouped. */
  readonly parent: Int32Array | null;
  /** A row's identifier values and level, for messages. */
  describeRow(row: number): string;
}

const keyOf = (ids: readonly (string | null)[], positions: readonly number[]) => positions.map((p) => ids[p]).join('\u0000');

/** The level's identifiers, for messages: `{state, gender}`, or `{} (the total)`. */
export const describeLevel = (level: Pick<HierarchyLevel, 'kept'>) => (level.kept.length ? `{${level.kept.join(', ')}}` : '{} (the total)');

/** A series' identifier values, for messages: `state=NSW, gender=F`, or `the total`. */
export const describeIds = (identifiers: readonly string[], ids: readonly (string | null)[]) =>
  identifiers.flatMap((name, i) => (ids[i] === null ? [] : [`${name}=${ids[i]}`])).join(', ') || 'the total';

/**
 * The structure of a list of series. `expectedLevels` (the levels the query selected, as kept
 * identifier sets) makes a level with no series an error rather than a silent gap.
 */
export function buildHierarchy(
  identifiers: readonly string[],
  series: readonly SeriesIdentity[],
  expectedLevels: readonly (readonly string[])[] = [],
): HierarchyStructure {
  const width = identifiers.length;
  const maskOf = (ids: readonly (string | null)[]) => ids.reduce((m, v, i) => (v === null ? m | (1 << (width - 1 - i)) : m), 0);
  const byMask = new Map<number, number[]>();
  series.forEach((s, i) => {
    if (s.ids.length !== width) throw new ReconciliationError('invalid_input', `series ${i} has ${s.ids.length} identifier values; expected ${width}`);
    const mask = maskOf(s.ids);
    const list = byMask.get(mask) ?? byMask.set(mask, []).get(mask)!;
    list.push(i);
  });
  const keptOf = (mask: number) => identifiers.filter((_, i) => (mask & (1 << (width - 1 - i))) === 0);
  for (const kept of expectedLevels) {
    const mask = maskOf(identifiers.map((name) => (kept.includes(name) ? '' : null)));
    if (!byMask.has(mask)) throw new ReconciliationError('level_without_data', `the level ${describeLevel({ kept: keptOf(mask) })} has no series`);
  }
  const bottomsIn = byMask.get(0);
  if (!bottomsIn) throw new ReconciliationError('level_without_data', `the bottom level ${describeLevel({ kept: [...identifiers] })} has no series`);

  // Coarsest first: fewer kept identifiers; ties by mask (earlier identifiers kept first), whatever the input order.
  const masks = [...byMask.keys()].sort((x, y) => keptOf(x).length - keptOf(y).length || x - y);
  const ordered = masks.flatMap((m) => byMask.get(m)!);
  const rowCount = series.length;
  const bottomCount = bottomsIn.length;
  const aggregateCount = rowCount - bottomCount;
  const seriesOfRow = Int32Array.from(ordered);
  const rowOfSeries = new Int32Array(rowCount);
  seriesOfRow.forEach((s, row) => (rowOfSeries[s] = row));
  const levelOfRow = new Int32Array(rowCount);
  let next = 0;
  const levels: HierarchyLevel[] = masks.map((mask, l) => {
    const count = byMask.get(mask)!.length;
    const rows = Int32Array.from({ length: count }, (_, k) => next + k);
    levelOfRow.fill(l, next, next + count);
    next += count;
    return { kept: keptOf(mask), mask, rows };
  });

  // Members: for each aggregate level, its rows by their kept values, then one pass over the bottoms.
  const memberLists: number[][] = Array.from({ length: aggregateCount }, () => []);
  for (const level of levels.slice(0, -1)) {
    const positions = level.kept.map((name) => identifiers.indexOf(name));
    const rowByKey = new Map<string, number>();
    for (const row of level.rows) {
      const key = keyOf(series[seriesOfRow[row]].ids, positions);
      if (rowByKey.has(key)) {
        throw new ReconciliationError(
          'invalid_input',
          `the level ${describeLevel(level)} holds the series ${key.split('\u0000').join(', ') || 'the total'} twice`,
        );
      }
      rowByKey.set(key, row);
    }
    for (let b = 0; b < bottomCount; b++) {
      const row = rowByKey.get(keyOf(series[seriesOfRow[aggregateCount + b]].ids, positions));
      if (row !== undefined) memberLists[row].push(b);
    }
  }
  const empty = memberLists.findIndex((list) => list.length === 0);
  if (empty >= 0) {
    const ids = series[seriesOfRow[empty]].ids;
    throw new ReconciliationError('level_without_data', `the series ${describeIds(identifiers, ids)} has no bottom series under it`);
  }
  const { start: memberStart, values: members } = compressed(memberLists);
  const ancestorLists: number[][] = Array.from({ length: bottomCount }, () => []);
  memberLists.forEach((list, j) => list.forEach((b) => ancestorLists[b].push(j)));
  const { start: ancestorStart, values: ancestors } = compressed(ancestorLists);

  const parent = treeParents(levels, memberLists, ancestorLists, aggregateCount);
  return {
    identifiers,
    aggregateCount,
    bottomCount,
    rowCount,
    seriesOfRow,
    rowOfSeries,
    memberStart,
    members,
    ancestorStart,
    ancestors,
    levels,
    levelOfRow,
    isTree: parent !== null,
    parent,
    describeRow: (row) => `${describeIds(identifiers, series[seriesOfRow[row]].ids)} (level ${describeLevel(levels[levelOfRow[row]])})`,
  };
}

/**
 * Parents when the structure is a tree: each level's kept identifiers contain the previous
 * level's, and each series sits under exactly one series of the previous level, or null.
 */
function treeParents(levels: readonly HierarchyLevel[], memberLists: number[][], ancestorLists: number[][], aggregateCount: number): Int32Array | null {
  for (let l = 1; l < levels.length; l++) {
    const above = new Set(levels[l - 1].kept);
    if (levels[l].kept.length <= above.size || ![...above].every((name) => levels[l].kept.includes(name))) return null;
  }
  const rowCount = aggregateCount + ancestorLists.length;
  const parent = new Int32Array(rowCount).fill(-1);
  const levelOf = new Int32Array(rowCount);
  levels.forEach((level, l) => level.rows.forEach((row) => (levelOf[row] = l)));
  // The parent of a row is its one ancestor in the previous level: the ancestors of any of its bottoms.
  const firstBottom = (row: number) => (row >= aggregateCount ? row - aggregateCount : memberLists[row][0]);
  for (let row = 0; row < rowCount; row++) {
    if (levelOf[row] === 0) continue;
    const candidates = ancestorLists[firstBottom(row)].filter((j) => levelOf[j] === levelOf[row] - 1);
    if (candidates.length !== 1) return null;
    parent[row] = candidates[0];
  }
  return parent;
}

function compressed(lists: readonly number[][]): { start: Int32Array; values: Int32Array } {
  const start = new Int32Array(lists.length + 1);
  lists.forEach((list, i) => (start[i + 1] = start[i] + list.length));
  const values = new Int32Array(start[lists.length]);
  lists.forEach((list, i) => values.set(list, start[i]));
  return { start, values };
}

/** Tree only: the row's ancestor in `level` (the row itself when it is in that level). */
export function ancestorInLevel(structure: HierarchyStructure, row: number, level: number): number {
  const parent = structure.parent!;
  let r = row;
  while (structure.levelOfRow[r] > level) r = parent[r];
  return r;
}

/** Tree only: the children of each row, as one list per row. */
export function childrenOf(structure: HierarchyStructure): Int32Array[] {
  const lists: number[][] = Array.from({ length: structure.rowCount }, () => []);
  structure.parent!.forEach((p, row) => p >= 0 && lists[p].push(row));
  return lists.map((list) => Int32Array.from(list));
}
