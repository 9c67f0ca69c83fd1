/**
 * The API key lives in this tab's session storage only: it is gone when the tab closes and is
 * never written anywhere else (no cookie, no local storage), so the server stays stateless.
 */
const KEY = 'forecast-api-key';

export const storedKey = (): string | null => sessionStorage.getItem(KEY);

export function keepKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}

/** Names of the series of jobs submitted from this tab (the API numbers series; the CSV named them). */
const NAMES = 'forecast-series-names:';

/**
 * Keeps a job's series names, best effort: when the tab's storage is full, the other jobs' names
 * make room, and if it is still full the names are left out (the pages then number the series).
 * The job exists either way; a full storage must not read as a failed submission.
 */
export function keepSeriesNames(jobId: string, names: string[]): void {
  const text = JSON.stringify(names);
  try {
    sessionStorage.setItem(NAMES + jobId, text);
  } catch {
    for (const key of Object.keys(sessionStorage)) if (key.startsWith(NAMES)) sessionStorage.removeItem(key);
    try {
      sessionStorage.setItem(NAMES + jobId, text);
    } catch {
      // Too many names for any storage: the job's pages number its series.
    }
  }
}

export function seriesNames(jobId: string): string[] | null {
  const text = sessionStorage.getItem(NAMES + jobId);
  return text ? (JSON.parse(text) as string[]) : null;
}
