import { writeFileSync } from 'node:fs';
import { buildHierarchy } from '../../../engine/reconciliation/hierarchy-structure.ts';
import { reconcile, reconciliationSpec, type ReconciliationInput } from '../../../engine/reconciliation/reconcile.ts';
import { ReconciliationError } from '../../../engine/reconciliation/reconciliation-error.ts';
import { QUANTILE_GRID } from '../accuracy/scoring.ts';
import { syntheticTree } from './synthetic-tree.ts';

/**
 * One method on the synthetic tree, in a process of its own so that its peak memory is its own:
 *   node --import tsx --expose-gc scale-worker.ts '<json: {spec, bottoms, middles, horizon, observations, meansFile?}>'
 * Prints one JSON line: the structure's build time; the time of the means alone, of the means with
 * standard deviations, and of those with 19 quantiles per series and step; resident memory
 * before, after the means and at its peak; or the method's refusal.
 */

const args = JSON.parse(process.argv[2]) as {
  spec: ReconciliationInput;
  bottoms: number;
  middles: number;
  horizon: number;
  observations: number;
  meansFile?: string;
};
const gc = (globalThis as { gc?: () => void }).gc;
const mib = (bytes: number) => bytes / 2 ** 20;

const data = syntheticTree(args.bottoms, args.middles, args.horizon, args.observations);
gc?.();
const baselineRss = mib(process.memoryUsage().rss);
const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;

let t = process.hrtime.bigint();
const structure = buildHierarchy(data.identifiers, data.series);
const buildSeconds = seconds(t);
const spec = reconciliationSpec(args.spec);
const { sd: _sd, ...meansOnly } = data.base;
try {
  t = process.hrtime.bigint();
  const means = reconcile(structure, spec, meansOnly);
  const meansSeconds = seconds(t);
  const meansPeakRss = process.resourceUsage().maxRSS / 1024;
  if (args.meansFile) {
    const flat = new Float64Array(structure.rowCount * args.horizon);
    means.mean.forEach((m, i) => flat.set(m, i * args.horizon));
    writeFileSync(args.meansFile, flat);
  }
  t = process.hrtime.bigint();
  reconcile(structure, spec, data.base);
  const sdSeconds = seconds(t);
  t = process.hrtime.bigint();
  reconcile(structure, spec, data.base, QUANTILE_GRID);
  const fullSeconds = seconds(t);
  const peakRss = process.resourceUsage().maxRSS / 1024;
  console.log(JSON.stringify({ buildSeconds, meansSeconds, sdSeconds, fullSeconds, baselineRss, meansPeakRss, peakRss }));
} catch (e) {
  if (!(e instanceof ReconciliationError)) throw e;
  console.log(JSON.stringify({ refusal: `${e.code}: ${e.message}` }));
}
