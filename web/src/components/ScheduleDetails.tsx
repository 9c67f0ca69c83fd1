import { showInstant } from '../time.ts';
import { cadenceText, windowText, zonedTime } from '../schedule-text.ts';
import type { Schedule } from '../types.ts';

/** How many of the next run times are shown. */
const NEXT_SHOWN = 5;

/** What a schedule is set to: its timing, model and policies, and the next times a run is due. */
export function ScheduleDetails({ schedule }: { schedule: Schedule }) {
  const { spec } = schedule;
  const between = windowText(spec);
  return (
    <div class="schedule-details">
      <dl class="settings-list">
        <dt>when</dt>
        <dd class="spec">
          <code>{cadenceText(spec)}</code> in <span class="time-zone">{spec.time_zone}</span>
          {between && <span class="muted"> · {between}</span>}
        </dd>
        <dt>model</dt>
        <dd class="model">{schedule.model}</dd>
        <dt>overlap</dt>
        <dd class="overlap">
          {schedule.overlap}
          {schedule.overlap_skipped > 0 && <span class="muted"> ({schedule.overlap_skipped} run(s) skipped so far: the last was still going)</span>}
        </dd>
        <dt>catch-up window</dt>
        <dd>{schedule.catch_up_window}</dd>
        <dt>alert</dt>
        <dd>{schedule.alert ? `${schedule.alert.metric} above ${schedule.alert.above}` : '–'}</dd>
        <dt>webhook</dt>
        <dd>{schedule.webhook ? <code>{schedule.webhook.url}</code> : '–'}</dd>
        <dt>created</dt>
        <dd>{showInstant(Date.parse(schedule.created_at), true)}</dd>
      </dl>
      <h3>Next runs</h3>
      {schedule.paused ? (
        <p class="muted next-runs-none">None while paused.</p>
      ) : schedule.next_runs.length === 0 ? (
        <p class="muted next-runs-none">None: the schedule has no run time left (past its end).</p>
      ) : (
        <ul class="next-runs">
          {schedule.next_runs.slice(0, NEXT_SHOWN).map((at) => (
            <li data-at={at}>
              {showInstant(Date.parse(at), true)}{' '}
              <span class="muted">
                ({zonedTime(Date.parse(at), spec.time_zone)} {spec.time_zone})
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
