import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HierarchyStructure } from '../../../engine/reconciliation/hierarchy-structure.ts';
import type { ReconciliationInput } from '../../../engine/reconciliation/reconcile.ts';

/**
 * hierarchicalforecast as the peer: the same structure, base means, history and residuals handed
 * to test/bench/peers/hierarchicalforecast-reconcile.py, which times each reconciler's
 * fit_predict (means only; the median of `repeats` calls) in the environment of
 * scripts/ensure-hierarchicalforecast.sh.
 */

const ROOT = new URL('../../../', import.meta.url).pathname;

export type PeerResult = { readonly seconds: number; readonly mean: Float64Array[] } | { readonly error: string };

export interface PeerRun {
  readonly version: string;
  readonly peakRssMiB: number;
  readonly results: PeerResult[];
}

/** The peer's Python, or why there is none. */
export function locatePeer(): { python: string } | { unavailable: string } {
  const r = spawnSync('bash', [join(ROOT, 'scripts/ensure-hierarchicalforecast.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return r.status === 0 ? { python: r.stdout.trim() } : { unavailable: `scripts/ensure-hierarchicalforecast.sh exited ${r.status}` };
}

/** Rows as the structure orders them: aggregates coarsest first, then the bottoms, as hierarchicalforecast expects. */
function byRow(structure: HierarchyStructure, perSeries: readonly ArrayLike<number>[]): Float64Array {
  const width = perSeries[0].length;
  const out = new Float64Array(structure.rowCount * width);
  for (let row = 0; row < structure.rowCount; row++) out.set(perSeries[structure.seriesOfRow[row]], row * width);
  return out;
}

export function runPeer(
  python: string,
  structure: HierarchyStructure,
  inputs: { mean: readonly ArrayLike<number>[]; history: readonly ArrayLike<number>[]; residuals: readonly ArrayLike<number>[] },
  methods: readonly ReconciliationInput[],
  sparse: boolean,
  repeats = 1,
): PeerRun {
  const folder = mkdtempSync(join(tmpdir(), 'reconciliation-peer-'));
  try {
    const horizon = inputs.mean[0].length;
    const aggregates = Array.from({ length: structure.aggregateCount }, (_, j) => [
      ...structure.members.subarray(structure.memberStart[j], structure.memberStart[j + 1]),
    ]);
    const tags = Object.fromEntries(structure.levels.map((level) => [level.kept.join('/') || 'total', [...level.rows]]));
    const meta = {
      n: structure.rowCount,
      bottoms: structure.bottomCount,
      horizon,
      observations: inputs.history[0].length,
      aggregates,
      tags,
      methods,
      sparse,
      repeats,
    };
    writeFileSync(join(folder, 'meta.json'), JSON.stringify(meta));
    writeFileSync(join(folder, 'mean.f64'), byRow(structure, inputs.mean));
    writeFileSync(join(folder, 'history.f64'), byRow(structure, inputs.history));
    writeFileSync(join(folder, 'residuals.f64'), byRow(structure, inputs.residuals));
    const script = join(ROOT, 'test/bench/peers/hierarchicalforecast-reconcile.py');
    const r = spawnSync(python, [script, folder], { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'], env: { ...process.env, OMP_NUM_THREADS: '1' } });
    if (r.status !== 0) throw new Error(`the hierarchicalforecast peer exited ${r.status}: ${r.stderr.slice(-2000)}`);
    const out = JSON.parse(readFileSync(join(folder, 'out.json'), 'utf8')) as {
      hierarchicalforecast: string;
      peak_rss_mib: number;
      methods: ({ seconds: number } | { error: string })[];
    };
    const results = out.methods.map((m, i): PeerResult => {
      if ('error' in m) return m;
      // A fresh copy: a Buffer may sit unaligned inside a shared pool.
      const flat = new Float64Array(new Uint8Array(readFileSync(join(folder, `${i}.f64`))).buffer);
      const mean = Array.from({ length: structure.rowCount }, () => new Float64Array(horizon));
      for (let row = 0; row < structure.rowCount; row++) mean[structure.seriesOfRow[row]].set(flat.subarray(row * horizon, (row + 1) * horizon));
      return { seconds: m.seconds, mean };
    });
    return { version: out.hierarchicalforecast, peakRssMiB: out.peak_rss_mib, results };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
