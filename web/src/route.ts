import { useEffect, useState } from 'preact/hooks';
import type { JobKind } from './types.ts';

/** The dashboard's pages, addressed by the URL's hash so that the server serves one page. */
export type Route =
  { page: 'jobs' } | { page: 'job'; kind: JobKind; id: string } | { page: 'schedules' } | { page: 'schedule'; id: string } | { page: 'playground' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  if (parts[0] === 'jobs' && (parts[1] === 'forecast' || parts[1] === 'beta') && parts[2]) return { page: 'job', kind: parts[1], id: parts[2] };
  if (parts[0] === 'schedules') return parts[1] ? { page: 'schedule', id: parts[1] } : { page: 'schedules' };
  if (parts[0] === 'playground') return { page: 'playground' };
  return { page: 'jobs' };
}

/**
 * Whether an id from the address bar can name a job or a schedule: letters, digits and dashes.
 * Any other (`..`, an encoded slash) would make its API path another route once the URL is resolved.
 */
export const isPlainId = (id: string): boolean => /^[\w-]+$/.test(id);

export const jobHref = (kind: JobKind, id: string): string => `#/jobs/${kind}/${id}`;
export const scheduleHref = (id: string): string => `#/schedules/${id}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}
