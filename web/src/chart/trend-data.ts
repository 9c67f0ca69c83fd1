import uPlot from 'uplot';
import type { MetricName, ScheduledRun } from '../types.ts';
import { FORECAST_COLORS } from './palette.ts';

/**
 * A schedule's accuracy over time: one pooled metric of each run, at the time the run was
 * scheduled for, one line per model and target (a run pools each apart). A run without metrics
 * (failed, or still going) leaves no point: the line spans the gap.
 */

/** The alert's threshold, drawn across the chart when the alert watches the metric shown. */
export const THRESHOLD_COLOR = '#b91c1c';

const LONE_RUN_MARGIN_S = 3600;

export interface Trend {
  /** Scheduled times (epoch milliseconds), oldest first. */
  x: number[];
  lines: { label: string; y: (number | null)[] }[];
}

const lineKey = (m: { model: string; target: string | null }) => (m.target ? `${m.model} · ${m.target}` : m.model);

export function trendOf(runs: ScheduledRun[], metric: MetricName): Trend {
  const scored = runs.filter((r) => r.metrics.length > 0).sort((a, b) => Date.parse(a.scheduled_at) - Date.parse(b.scheduled_at));
  const labels = [...new Set(scored.flatMap((r) => r.metrics.map(lineKey)))];
  return {
    x: scored.map((r) => Date.parse(r.scheduled_at)),
    lines: labels.map((label) => ({ label, y: scored.map((r) => r.metrics.find((m) => lineKey(m) === label)?.[metric] ?? null) })),
  };
}

/** uPlot's data and options for a trend: lines with their points, and the alert's threshold when given. */
export function trendChart(trend: Trend, threshold: number | null, width: number, height: number): { data: uPlot.AlignedData; options: uPlot.Options } {
  const series: uPlot.Series[] = [{ label: 'scheduled' }];
  const columns: (number | null)[][] = [];
  trend.lines.forEach((line, k) => {
    const color = FORECAST_COLORS[k % FORECAST_COLORS.length];
    series.push({ label: line.label, stroke: color, width: 2, spanGaps: true, points: { show: true, size: 8, fill: color, stroke: color } });
    columns.push(line.y);
  });
  if (threshold !== null) {
    series.push({ label: `alert above ${threshold}`, stroke: THRESHOLD_COLOR, width: 1, dash: [6, 4], points: { show: false } });
    columns.push(trend.x.map(() => threshold));
  }
  const options: uPlot.Options = {
    width,
    height,
    series,
    // A single run would sit at the edge of the range uPlot makes for one point (years wide): a margin either side centres it.
    scales: {
      x:
        trend.x.length === 1
          ? { time: true, auto: false, range: [trend.x[0] / 1000 - LONE_RUN_MARGIN_S, trend.x[0] / 1000 + LONE_RUN_MARGIN_S] }
          : { time: true },
    },
    // Scheduled times are instants; the axis reads them in UTC, as the runs table does.
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1e3), 'Etc/UTC'),
    axes: [{}, { size: 64 }],
    legend: { live: true },
  };
  return { data: [trend.x.map((t) => t / 1000), ...columns] as uPlot.AlignedData, options };
}
