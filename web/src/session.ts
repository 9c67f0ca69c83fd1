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

export function keepSeriesNames(jobId: string, names: string[]): void {
  sessionStorage.setItem(NAMES + jobId, JSON.stringify(names));
}

export function seriesNames(jobId: string): string[] | null {
  const text = sessionStorage.getItem(NAMES + jobId);
  return text ? (JSON.parse(text) as string[]) : null;
}
