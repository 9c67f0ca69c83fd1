/**
 * A set's forecasts as one request, or as one request per series: how a client that sends one
 * series at a time meets the service. A global model then learns from that series alone, and the
 * ensemble has no pool to weigh its members or size its quantiles by.
 */
import type { ForecastOutput, ForecastTask, GlobalModel } from '../../../models/contract/model-interface.ts';
import { createEnsemble } from '../../../models/families/ensemble/ensemble.ts';
import { loadMember } from '../../../models/contract/model-registry.ts';
import { BENCH_MODEL_SETTINGS } from './runs.ts';

/** A model's forecasts of every task and the CPU time they took. */
export interface Served {
  readonly outputs: ForecastOutput[];
  readonly cpuMs: number;
}

/** `model`'s forecasts of `tasks`: all in one request, or each task in a request of its own (`perSeries`). */
export async function serve(model: GlobalModel, tasks: readonly ForecastTask[], options: object | undefined, perSeries: boolean): Promise<Served> {
  const c0 = process.cpuUsage();
  const outputs: ForecastOutput[] = [];
  if (perSeries) for (const task of tasks) outputs.push((await model.forecastBatch([task], [], { options }))[0]);
  else outputs.push(...(await model.forecastBatch(tasks, [], { options })));
  const dc = process.cpuUsage(c0);
  return { outputs, cpuMs: (dc.user + dc.system) / 1000 };
}

/**
 * The rows `--one-by-one` adds: the default with one series per request, and svc-global alone
 * with its own quantiles, both ways.
 */
export async function oneByOneRows(tasks: readonly ForecastTask[], windows: number): Promise<{ label: string; served: Served }[]> {
  const ensemble = createEnsemble((m) => loadMember(m, BENCH_MODEL_SETTINGS));
  const svcGlobal = (await loadMember('svc-global', BENCH_MODEL_SETTINGS)) as GlobalModel;
  return [
    { label: 'default, one series per request', served: await serve(ensemble, tasks, { windows }, true) },
    { label: 'svc-global alone, its own quantiles, one request', served: await serve(svcGlobal, tasks, undefined, false) },
    { label: 'svc-global alone, its own quantiles, one series per request', served: await serve(svcGlobal, tasks, undefined, true) },
  ];
}
