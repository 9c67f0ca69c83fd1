import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { trendChart, trendOf } from '../chart/trend-data.ts';
import { METRIC_NAMES, type MetricName, type Schedule, type ScheduledRun } from '../types.ts';

const HEIGHT = 280;

/** The metric shown first: the one the alert watches, else CRPS where runs have it (quantiles asked for), else MAE. */
function firstMetric(schedule: Schedule, runs: ScheduledRun[]): MetricName {
  if (schedule.alert) return schedule.alert.metric;
  return runs.some((r) => r.metrics.some((m) => m.crps !== null)) ? 'crps' : 'mae';
}

/** A pooled metric of every scored run against its scheduled time (uPlot), with a metric picker. */
export function MetricTrend({ schedule, runs }: { schedule: Schedule; runs: ScheduledRun[] }) {
  const [metric, setMetric] = useState<MetricName>(() => firstMetric(schedule, runs));
  const trend = useMemo(() => trendOf(runs, metric), [runs, metric]);
  const threshold = schedule.alert?.metric === metric ? schedule.alert.above : null;
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(320, element.clientWidth);
    const { data, options } = trendChart(trend, threshold, width(), HEIGHT);
    // Says when the canvas has been drawn, and with how many runs' points (what the browser test waits for).
    element.removeAttribute('data-drawn');
    const drawn = () => element.setAttribute('data-drawn', String(trend.x.length));
    const plot = new uPlot({ ...options, hooks: { draw: [drawn] } }, data, element);
    const resize = () => plot.setSize({ width: width(), height: HEIGHT });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [trend, threshold]);

  return (
    <div class="metric-trend">
      <h3>Accuracy by run</h3>
      <div class="controls">
        <label>
          metric{' '}
          <select name="trend-metric" value={metric} onChange={(e) => setMetric((e.target as HTMLSelectElement).value as MetricName)}>
            {METRIC_NAMES.map((m) => (
              <option value={m}>{m}</option>
            ))}
          </select>
        </label>
        <span class="muted small">pooled over every scored step of each run; x is the time the run was scheduled for (UTC)</span>
      </div>
      {trend.x.length === 0 ? <p class="muted">No run has been scored yet: each completed run adds a point.</p> : <div class="trend-chart" ref={box} />}
    </div>
  );
}
