/** A metric or value for a table: four significant digits, a dash for null. */
export function formatMetric(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  return magnitude >= 1e6 || magnitude < 1e-3 ? value.toExponential(3) : Number(value.toPrecision(4)).toString();
}

/** A job's progress as text: forecasts done of the total. */
export function progressText(progress: { done: number; total: number | null } | null | undefined): string {
  if (!progress) return 'waiting for a worker';
  return progress.total ? `${progress.done} / ${progress.total} forecasts` : `${progress.done} forecasts`;
}

export const shortId = (id: string): string => id.slice(0, 8);
