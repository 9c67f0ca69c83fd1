import type { FanForecast } from '../chart/model.ts';
import { formatMetric } from '../format.ts';
import { showInstant } from '../time.ts';
import { METRIC_NAMES } from '../types.ts';

/** The metrics of the forecasts a chart shows, one row per creation date; nothing when none was scored. */
export function MetricsOfForecasts({ forecasts }: { forecasts: FanForecast[] }) {
  const scored = forecasts.filter((f) => f.metrics);
  if (scored.length === 0) return null;
  return (
    <table class="metrics-of-forecasts">
      <thead>
        <tr>
          <th>creation date</th>
          {METRIC_NAMES.map((m) => (
            <th>{m}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {scored.map((f) => (
          <tr>
            <td>{showInstant(f.createdAt)}</td>
            {METRIC_NAMES.map((m) => (
              <td class="number">{formatMetric(f.metrics![m])}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
