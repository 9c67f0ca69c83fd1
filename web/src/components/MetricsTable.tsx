import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson } from '../api.ts';
import { formatMetric } from '../format.ts';
import type { Cell, JobKind, MetricsPage } from '../types.ts';

const PAGE = 25;
/** Columns every row of a job repeats: left out of the table. */
const HIDDEN = new Set(['job_id', 'model']);

const show = (value: Cell): string =>
  typeof value === 'number'
    ? formatMetric(value)
    : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)
      ? value.slice(0, 19).replace('T', ' ')
      : String(value ?? '–');

/** The job's metrics by series and creation date, a page at a time; a row opens its forecast in the series browser. */
export function MetricsTable({
  prefix,
  kind,
  browsable,
  onSelect,
}: {
  prefix: string;
  kind: JobKind;
  /** Whether the page shows a series browser that a row can open (not for a failed job). */
  browsable: boolean;
  onSelect: (series: number, fcd: number) => void;
}) {
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<MetricsPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<MetricsPage>(`${prefix}/metrics?offset=${offset}&limit=${PAGE}`).then(setPage, (err) =>
      setError(err instanceof ApiError ? err.describe() : (err as Error).message),
    );
  }, [prefix, offset]);

  if (error) return <p class="error">{error}</p>;
  if (!page || page.total === 0) return null;
  const columns = page.columns.filter((c) => !HIDDEN.has(c));
  const selectable = kind === 'forecast' && browsable;
  return (
    <div class="metrics-table">
      <h3>Metrics by series and creation date</h3>
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {page.rows.map((row) => (
            <tr
              class={selectable ? 'selectable' : ''}
              onClick={selectable ? () => onSelect(Number(row.series_index), Number(row.fcd_index)) : undefined}
              // Reachable by keyboard too: Tab to a row, Enter or Space opens it.
              tabIndex={selectable ? 0 : undefined}
              onKeyDown={
                selectable
                  ? (e) => {
                      if (e.key !== 'Enter' && e.key !== ' ') return;
                      e.preventDefault();
                      onSelect(Number(row.series_index), Number(row.fcd_index));
                    }
                  : undefined
              }
              title={selectable ? 'Show this forecast in the series browser' : undefined}
            >
              {columns.map((c) => (
                <td class={typeof row[c] === 'number' ? 'number' : ''}>{show(row[c])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <div class="controls">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </button>
        <span class="muted">
          rows {offset + 1}–{Math.min(offset + PAGE, page.total)} of {page.total}
        </span>
        <button type="button" disabled={offset + PAGE >= page.total} onClick={() => setOffset(offset + PAGE)}>
          Next
        </button>
      </div>
    </div>
  );
}
