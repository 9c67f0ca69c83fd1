import { refuseField } from '../errors.ts';
import type { BetaQuery } from './query-fields.ts';

/**
 * Roll-up levels. Each `hierarchies` key is a dimension: the key identifier and every identifier
 * on its paths. A dimension is seen whole (the base), or at step j of one of its paths, where it
 * keeps only that path's identifiers from j on (sku -> store -> region: {sku, store, region},
 * {store, region}, {region}). The levels are every combination of the dimensions' choices;
 * identifiers in no hierarchy are always kept.
 */

export interface Level {
  /** Identifier columns this level keeps, in the order of the identifier list. */
  kept: string[];
  /** DuckDB's GROUPING() over the identifier list: bit (n-1-i) is set when identifier i is aggregated away. */
  mask: number;
}

export function groupingMask(identifiers: string[], kept: ReadonlySet<string>): number {
  return identifiers.reduce((mask, name, i) => (kept.has(name) ? mask : mask | (1 << (identifiers.length - 1 - i))), 0);
}

export function hierarchyLevels(identifiers: string[], hierarchies: BetaQuery['input']['hierarchies']): Level[] {
  // Each dimension offers the sets of its identifiers to drop.
  const choices: string[][][] = Object.entries(hierarchies ?? {}).map(([key, paths]) => {
    const full = paths.map((p) => (p[0] === key ? p : [key, ...p]));
    const members = new Set(full.flat());
    const options: string[][] = [[]];
    for (const path of full) {
      for (let j = 1; j < path.length; j++) options.push([...members].filter((m) => !path.slice(j).includes(m)));
    }
    return options;
  });
  let drops: string[][] = [[]];
  for (const options of choices) drops = drops.flatMap((dropped) => options.map((o) => [...dropped, ...o]));
  const levels = new Map<number, Level>();
  for (const dropped of drops) {
    const kept = identifiers.filter((id) => !dropped.includes(id));
    const mask = groupingMask(identifiers, new Set(kept));
    if (!levels.has(mask)) levels.set(mask, { kept, mask });
  }
  return [...levels.values()];
}

export interface Selection {
  levels: Level[];
  /** Identifier -> the only values to keep. */
  values: Map<string, string[]>;
}

const describe = (level: Level) => (level.kept.length ? `{${level.kept.join(', ')}}` : '{} (the total)');

/**
 * The levels the selector picks: "any" keeps the identifier, null wants it aggregated away, a
 * value (or values) keeps it and filters on it. Identifiers not named are unconstrained; no
 * selector means every level.
 */
export function selectLevels(levels: Level[], selector: BetaQuery['selector']): Selection {
  const values = new Map<string, string[]>();
  const entries = Object.entries(selector ?? {});
  for (const [name, choice] of entries) if (choice !== null && choice !== 'any') values.set(name, Array.isArray(choice) ? choice : [choice]);
  const picked = levels.filter((level) => entries.every(([name, choice]) => (choice === null ? !level.kept.includes(name) : level.kept.includes(name))));
  if (picked.length === 0) {
    const message = `the selector picks none of the levels: ${levels.map(describe).join(', ')}`;
    throw refuseField({ root: 'request', path: ['selector'] }, message);
  }
  return { levels: picked, values };
}
