import { useState } from 'preact/hooks';
import { ApiError, getJson } from '../api.ts';
import { shortId } from '../format.ts';
import { usePolling } from '../polling.ts';
import { scheduleHref } from '../route.ts';
import { cadenceText } from '../schedule-text.ts';
import { showInstant } from '../time.ts';
import type { Schedule } from '../types.ts';

/** Each listed schedule's state is asked of Temporal: a slower refresh than the jobs list's is enough. */
const REFRESH_MS = 5000;

/** The caller's scheduled backtests, oldest first: timing, model, state and next run. */
export function SchedulesList() {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = async () => {
    try {
      setSchedules((await getJson<{ schedules: Schedule[] }>('/v1-beta/forecast-schedules')).schedules);
      setError(null);
    } catch (err) {
      setError(err instanceof ApiError ? err.describe() : (err as Error).message);
    }
  };
  usePolling(refresh, REFRESH_MS, true, []);

  return (
    <section>
      <h2>Schedules</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {schedules === null ? (
        <p class="muted">Loading…</p>
      ) : schedules.length === 0 ? (
        <p class="muted">
          No schedules yet. Make one with <code>forecast schedule create</code> or <code>POST /v1-beta/forecast-schedules</code>.
        </p>
      ) : (
        <table class="schedules">
          <thead>
            <tr>
              <th>schedule</th>
              <th>model</th>
              <th>when</th>
              <th>time zone</th>
              <th>state</th>
              <th>next run</th>
              <th>created</th>
            </tr>
          </thead>
          <tbody>
            {schedules.map((s) => (
              <tr data-schedule-id={s.schedule_id} data-paused={String(s.paused)}>
                <td>
                  <a href={scheduleHref(s.schedule_id)}>{shortId(s.schedule_id)}</a>
                </td>
                <td>{s.model}</td>
                <td>
                  <code>{cadenceText(s.spec)}</code>
                </td>
                <td>{s.spec.time_zone}</td>
                <td>
                  <span class={`badge ${s.paused ? 'paused' : 'active'}`}>{s.paused ? 'paused' : 'active'}</span>
                </td>
                <td>{s.next_runs[0] ? showInstant(Date.parse(s.next_runs[0]), true) : '–'}</td>
                <td>{showInstant(Date.parse(s.created_at), true)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
