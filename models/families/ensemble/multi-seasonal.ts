import type { ForecastTask } from '../../contract/model-interface.ts';

/**
 * Whether more than one of the task's seasonal periods fits twice in its history: the periods
 * mstl keeps (models/families/mstl/mstl-decomposition.ts, usablePeriods; a family does not import
 * another).
 */
export function multiSeasonal(task: ForecastTask): boolean {
  const periods = new Set((task.seasonLengths ?? [task.seasonLength]).map((p) => Math.round(p)));
  return [...periods].filter((p) => p >= 2 && 2 * p < task.history.length).length > 1;
}
