import { useState } from 'preact/hooks';
import { ApiError, download, getJson, request } from '../api.ts';
import { usePolling } from '../polling.ts';
import { isPlainId } from '../route.ts';
import type { JobKind, JobStatus } from '../types.ts';
import { JobState } from './JobState.tsx';
import { Leaderboard } from './Leaderboard.tsx';
import { MetricsTable } from './MetricsTable.tsx';
import { SeriesBrowser } from './SeriesBrowser.tsx';

const REFRESH_MS = 1000;

/**
 * One job: its state (live until it ends), cancel and downloads; once completed its leaderboard,
 * its metrics by series and creation date and a series browser. The metrics are read as the
 * state changes, not while a job runs: a failed job lists what its chunks wrote before it failed.
 */
export function JobPage({ kind, id }: { kind: JobKind; id: string }) {
  const prefix = kind === 'beta' ? `/v1-beta/forecast-jobs/${id}` : `/forecast-jobs/${id}`;
  const [status, setStatus] = useState<JobStatus | null>(null);
  // An id from the address bar that no job can have is not asked for.
  const [error, setError] = useState<string | null>(isPlainId(id) ? null : `no job '${id}': a job's id is letters, digits and dashes`);
  // A job that is not there (any more) or not the caller's: asking again would not change that.
  const [gone, setGone] = useState(!isPlainId(id));
  // `n` counts the rows opened: the same row opened again, after the browser was moved by hand, opens it anew.
  const [selected, setSelected] = useState<{ series: number; fcd: number; n: number }>({ series: 0, fcd: 0, n: 0 });
  const fail = (err: unknown) => {
    setError(err instanceof ApiError ? err.describe() : (err as Error).message);
    if (err instanceof ApiError && (err.status === 403 || err.status === 404)) setGone(true);
  };

  // A completed forecast job answers its status with its series: one is enough here.
  const poll = () =>
    getJson<JobStatus>(kind === 'beta' ? prefix : `${prefix}?limit=1`).then((s) => {
      setStatus(s);
      setError(null);
    }, fail);
  usePolling(poll, REFRESH_MS, !gone && (status === null || status.status === 'in_progress'), [prefix]);

  const cancel = () => request(`${prefix}/cancel`, { method: 'POST' }).then(poll).catch(fail);
  const running = status?.status === 'in_progress';
  const completed = status?.status === 'completed';

  return (
    <section class="job-page" data-status={status?.status ?? 'loading'}>
      <h2>
        Job <code>{id}</code> <span class="muted small">({kind})</span>
      </h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {status && (
        <div class="controls">
          <JobState job={status} />
          {running && (
            <button type="button" class="cancel" onClick={cancel}>
              Cancel
            </button>
          )}
          {completed &&
            (['predictions', 'metrics'] as const).map((table) => (
              <button type="button" onClick={() => download(`${prefix}/${table}.parquet`, `${id}-${table}.parquet`).catch(fail)}>
                Download {table}.parquet
              </button>
            ))}
        </div>
      )}
      {completed && <Leaderboard prefix={prefix} current={id} />}
      {status && status.status !== 'failed' && kind === 'forecast' && (
        <SeriesBrowser
          key={`${selected.series}:${selected.fcd}:${selected.n}:${status.status}`}
          jobId={id}
          initialSeries={selected.series}
          initialFcd={selected.fcd}
        />
      )}
      {status && (
        <MetricsTable
          key={status.status}
          prefix={prefix}
          kind={kind}
          browsable={status.status !== 'failed'}
          onSelect={(series, fcd) => setSelected((last) => ({ series, fcd, n: last.n + 1 }))}
        />
      )}
      {!status && !error && <p class="muted">Loading…</p>}
    </section>
  );
}
