/**
 * Index entries to instants, as the service reads them: an entry without an offset (a date, or a
 * date-time without `Z` or `+hh:mm`) is UTC. Browsers would read a bare date-time as local time.
 */
export function toMillis(entry: string): number {
  const text = entry.trim().replace(' ', 'T');
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return Date.parse(`${text}T00:00:00Z`);
  if (/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)) return Date.parse(`${text}Z`);
  return Date.parse(text);
}

/** An instant as the dashboard shows it: a date, with the time of day (UTC) when it has one or `always`. */
export function showInstant(ms: number, always = false): string {
  const iso = new Date(ms).toISOString();
  if (iso.endsWith('T00:00:00.000Z') && !always) return iso.slice(0, 10);
  return `${iso.slice(0, iso.endsWith(':00.000Z') ? 16 : 19).replace('T', ' ')} UTC`;
}
