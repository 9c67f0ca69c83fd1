/**
 * The rule for the URLs a scheduled backtest's webhook may name, shared by the API (when a
 * schedule is made or changed) and the worker (before every call): like the locator rules
 * (locator.ts), it keeps a client from making the server reach where it should not.
 */

/**
 * Whether a webhook URL may be called: http or https, no credentials in it, and its host (with
 * its port, when the entry names one) on SCHEDULE_WEBHOOK_HOSTS. Null when allowed, else why not.
 */
export function webhookRefusal(raw: string, hosts: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'may not carry credentials; the schedule signs each call instead';
  if (hosts.length === 0) return 'cannot be called: this server allows no webhook hosts (SCHEDULE_WEBHOOK_HOSTS is empty)';
  const host = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const allowed = hosts.some((entry) => entry === host || entry === `${host}:${port}`);
  return allowed ? null : `names host '${url.host}', which is not on this server's list of webhook hosts`;
}
