import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson } from '../api.ts';
import { formatMetric, shortId } from '../format.ts';
import { jobHref } from '../route.ts';
import { METRIC_NAMES, type Leaderboard as Board } from '../types.ts';

/** The models of this job and of the caller's other jobs on the same data, ranked by accuracy (computed by the server with DuckDB). */
export function Leaderboard({ prefix, current }: { prefix: string; current: string }) {
  const [board, setBoard] = useState<Board | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<Board>(`${prefix}/leaderboard`).then(setBoard, (err) => setError(err instanceof ApiError ? err.describe() : (err as Error).message));
  }, [prefix]);
  return (
    <div class="leaderboard">
      <h3>Leaderboard</h3>
      <p class="muted small">
        Pooled over every forecast step with a known actual. Compared: this job
        {board && board.jobs.length > 1
          ? ` and ${board.jobs.length - 1} other job(s) of yours on the same data`
          : prefix.startsWith('/v1-beta/')
            ? ' (a beta job is ranked alone, per target)'
            : ' (run other models on the same data to compare)'}
        .
      </p>
      {error && <p class="error">{error}</p>}
      {board && board.entries.length === 0 && <p class="muted">No forecast step has a known actual: nothing to score.</p>}
      {board && board.entries.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>rank</th>
              <th>model</th>
              {board.entries.some((e) => e.target) && <th>target</th>}
              <th>job</th>
              <th>scored steps</th>
              {METRIC_NAMES.map((m) => (
                <th>{m}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {board.entries.map((e) => (
              <tr class={e.job_id === current ? 'current' : ''} data-model={e.model}>
                <td class="number">{e.rank}</td>
                <td>{e.model}</td>
                {board.entries.some((x) => x.target) && <td>{e.target}</td>}
                <td>{e.job_id === current ? 'this job' : <a href={jobHref('forecast', e.job_id)}>{shortId(e.job_id)}</a>}</td>
                <td class="number">{e.scored_steps}</td>
                {METRIC_NAMES.map((m) => (
                  <td class="number">{formatMetric(e[m])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
