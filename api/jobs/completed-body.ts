import type { JobStore } from '../../store/job-store.ts';
import type { JobMeta } from '../../store/layout.ts';

/** Series are read this many at a time, so a large job never sits in memory whole. */
const SERIES_PER_READ = 200;

/**
 * A completed job's polling body as a stream of JSON text: series are read from its results a
 * block at a time and written as they come, so the body is never built as one string.
 */
export async function* completedJobBody(store: JobStore, meta: JobMeta, page: { offset: number; limit: number | null }): AsyncGenerator<string> {
  const total = meta.series ?? 0;
  const from = Math.min(page.offset, total);
  const to = page.limit === null ? total : Math.min(total, from + page.limit);
  // The page as asked for: an offset past the end is echoed as sent, with no series.
  yield `{"job_id":${JSON.stringify(meta.job_id)},"status":"completed","total_series":${total},"offset":${page.offset},"limit":${page.limit ?? 'null'},"series":[`;
  for (let start = from; start < to; start += SERIES_PER_READ) {
    const block = await store.predictions(meta, start, Math.min(to, start + SERIES_PER_READ));
    yield block.map((s, i) => (start + i > from ? ',' : '') + JSON.stringify(s)).join('');
  }
  yield ']}';
}
