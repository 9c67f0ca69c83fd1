import { useRef, useState } from 'preact/hooks';
import { ApiError, getJson, patchJson, request } from '../api.ts';
import { usePolling } from '../polling.ts';
import { isPlainId } from '../route.ts';
import type { Schedule, ScheduledRun } from '../types.ts';
import { MetricTrend } from './MetricTrend.tsx';
import { ScheduleDetails } from './ScheduleDetails.tsx';
import { ScheduleRuns } from './ScheduleRuns.tsx';

/** Often enough to see a triggered run start and finish; the runs are read from the job store. */
const REFRESH_MS = 2000;

/**
 * One scheduled backtest: its settings and next run times, Pause / Resume (PATCH `paused`),
 * Trigger, its runs with their pooled metrics, and a chart of a metric across runs.
 */
export function SchedulePage({ id }: { id: string }) {
  const base = `/v1-beta/forecast-schedules/${id}`;
  const [schedule, setSchedule] = useState<Schedule | null>(null);
  const [runs, setRuns] = useState<ScheduledRun[] | null>(null);
  // An id from the address bar that no schedule can have is not asked for.
  const [error, setError] = useState<string | null>(isPlainId(id) ? null : `no schedule '${id}': a schedule's id is letters, digits and dashes`);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A schedule that is not there (any more) or not the caller's: asking again would not change that.
  const [gone, setGone] = useState(!isPlainId(id));
  // The runs as last read: an unchanged answer keeps the same array, so the chart is not drawn again.
  const lastRuns = useRef('');
  const fail = (err: unknown) => {
    setError(err instanceof ApiError ? err.describe() : (err as Error).message);
    // An earlier action's notice no longer holds once something failed.
    setNotice(null);
    if (err instanceof ApiError && (err.status === 403 || err.status === 404)) setGone(true);
  };

  // Bumped as every action starts and ends: a poll begun before the end may answer after it, with the state it changed.
  const actions = useRef(0);
  const poll = () => {
    const started = actions.current;
    return Promise.all([getJson<Schedule>(base), getJson<{ runs: ScheduledRun[] }>(`${base}/runs`)]).then(([s, r]) => {
      if (started !== actions.current) return;
      setSchedule(s);
      const text = JSON.stringify(r.runs);
      if (text !== lastRuns.current) {
        lastRuns.current = text;
        setRuns(r.runs);
      }
      setError(null);
    }, fail);
  };
  usePolling(poll, REFRESH_MS, !gone, [base]);

  const act = async (action: () => Promise<unknown>, done?: string) => {
    setBusy(true);
    actions.current++;
    try {
      await action();
      setNotice(done ?? null);
    } catch (err) {
      fail(err);
    } finally {
      actions.current++;
      setBusy(false);
    }
    void poll();
  };
  const setPaused = (paused: boolean) => act(() => patchJson<Schedule>(base, { paused }).then(setSchedule));
  const trigger = () => act(() => request(`${base}/trigger`, { method: 'POST' }), 'A run was asked for: it shows below once its job has started.');

  return (
    <section class="schedule-page" data-paused={schedule ? String(schedule.paused) : 'loading'}>
      <h2>
        Schedule <code>{id}</code>
      </h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {schedule && !gone && (
        <>
          <div class="controls">
            <span class={`badge ${schedule.paused ? 'paused' : 'active'}`}>{schedule.paused ? 'paused' : 'active'}</span>
            {schedule.paused ? (
              <button type="button" name="resume" disabled={busy} onClick={() => setPaused(false)}>
                Resume
              </button>
            ) : (
              <button type="button" name="pause" class="cancel" disabled={busy} onClick={() => setPaused(true)}>
                Pause
              </button>
            )}
            <button type="button" name="trigger" disabled={busy} onClick={trigger} title="Start a run now, beside any run in progress">
              Trigger
            </button>
            {notice && <span class="muted small">{notice}</span>}
          </div>
          <ScheduleDetails schedule={schedule} />
        </>
      )}
      {schedule && runs && (
        <>
          <MetricTrend schedule={schedule} runs={runs} />
          <h3>Runs</h3>
          <ScheduleRuns runs={runs} />
        </>
      )}
      {!schedule && !error && <p class="muted">Loading…</p>}
    </section>
  );
}
