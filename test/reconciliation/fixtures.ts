import { readFileSync } from 'node:fs';
import { buildHierarchy, type HierarchyStructure } from '../../engine/reconciliation/hierarchy-structure.ts';
import type { BaseForecasts, ReconciliationInput } from '../../engine/reconciliation/reconcile.ts';

/** The reference fixtures of tools/reference/hierarchical-fixtures.py, as the reconciliation reads them. */

export interface FixtureCase {
  readonly spec: ReconciliationInput;
  readonly mean?: number[][];
  /** Series x level x step. */
  readonly quantiles?: number[][][];
  readonly error?: string;
}

export interface Fixture {
  readonly name: string;
  readonly hierarchicalforecast: string;
  readonly identifiers: string[];
  readonly series: (string | null)[][];
  readonly quantile_levels: number[];
  readonly mean: number[][];
  readonly sd: number[][];
  readonly history: number[][];
  readonly fitted: number[][];
  readonly cases: FixtureCase[];
}

export const FIXTURE_NAMES = ['tree3', 'tree4', 'grouped'] as const;

export function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`../fixtures/reconciliation/${name}.json`, import.meta.url), 'utf8')) as Fixture;
}

export function fixtureStructure(fx: Fixture): HierarchyStructure {
  return buildHierarchy(
    fx.identifiers,
    fx.series.map((ids) => ({ ids })),
  );
}

/** The base forecasts both sides read: residuals are the history less the fitted values, as hierarchicalforecast takes them. */
export function fixtureBase(fx: Fixture): BaseForecasts {
  return {
    mean: fx.mean.map((m) => Float64Array.from(m)),
    sd: fx.sd.map((s) => Float64Array.from(s)),
    history: fx.history.map((h) => Float64Array.from(h)),
    residuals: fx.history.map((h, i) => Float64Array.from(h, (v, t) => v - fx.fitted[i][t])),
  };
}

/** Largest difference relative to max(1, |reference|). */
export function largestRelativeError(actual: ArrayLike<number>[], reference: number[][]): number {
  let worst = 0;
  reference.forEach((row, i) => row.forEach((ref, t) => (worst = Math.max(worst, Math.abs(actual[i][t] - ref) / Math.max(1, Math.abs(ref))))));
  return worst;
}
