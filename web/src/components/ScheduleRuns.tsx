import { formatMetric, shortId } from '../format.ts';
import { jobHref } from '../route.ts';
import { showInstant } from '../time.ts';
import { METRIC_NAMES, type PooledMetrics, type ScheduledRun } from '../types.ts';

const instant = (text: string | null) => (text ? showInstant(Date.parse(text), true) : '–');
const alertedText = (alerted: boolean | null) => (alerted === null ? '–' : alerted ? 'yes' : 'no');

/** The run's status as a badge; a failure with its code, and its message beside it. */
function RunStatus({ run }: { run: ScheduledRun }) {
  const failed = run.status === 'failed' && run.error;
  return (
    <span class="job-state">
      <span class={`badge ${run.status}`}>{failed ? `failed: ${run.error!.code}` : run.status.replace('_', ' ')}</span>
      {failed && <span class="muted small"> {run.error!.message}</span>}
    </span>
  );
}

/**
 * A schedule's runs, newest first. Each run is a beta job (its id opens the job's page); a run
 * pools its metrics per model and target, so a run over several targets spans several rows.
 */
export function ScheduleRuns({ runs }: { runs: ScheduledRun[] }) {
  if (runs.length === 0) return <p class="muted">No runs yet. Trigger one, or wait for the next run time.</p>;
  return (
    <table class="schedule-runs">
      <thead>
        <tr>
          <th>scheduled</th>
          <th>started</th>
          <th>finished</th>
          <th>job</th>
          <th>status</th>
          <th>model · target</th>
          <th>scored steps</th>
          {METRIC_NAMES.map((m) => (
            <th>{m}</th>
          ))}
          <th>alerted</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => {
          const pooled: (PooledMetrics | null)[] = run.metrics.length > 0 ? run.metrics : [null];
          const span = pooled.length;
          return pooled.map((m, k) => (
            <tr data-job-id={run.job_id} data-status={run.status} class={run.alerted ? 'alerted' : ''}>
              {k === 0 && (
                <>
                  <td rowSpan={span}>{instant(run.scheduled_at)}</td>
                  <td rowSpan={span}>{instant(run.started_at)}</td>
                  <td rowSpan={span}>{instant(run.finished_at)}</td>
                  <td rowSpan={span}>
                    <a href={jobHref('beta', run.job_id)} title={run.job_id}>
                      {shortId(run.job_id)}
                    </a>
                  </td>
                  <td rowSpan={span}>
                    <RunStatus run={run} />
                  </td>
                </>
              )}
              <td>{m ? (m.target ? `${m.model} · ${m.target}` : m.model) : '–'}</td>
              <td class="number">{m ? m.scored_steps : '–'}</td>
              {METRIC_NAMES.map((name) => (
                <td class="number" data-metric={name}>
                  {formatMetric(m?.[name])}
                </td>
              ))}
              {k === 0 && (
                <td rowSpan={span} class="alerted-cell">
                  {alertedText(run.alerted)}
                </td>
              )}
            </tr>
          ));
        })}
      </tbody>
    </table>
  );
}
