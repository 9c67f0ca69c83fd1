import { createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { webhookRefusal } from '../engine/beta/webhook-url.ts';
import type { AccuracyRow } from '../store/result-queries.ts';
import type { RunStatus, StoredAlert } from '../store/schedule-records.ts';

/**
 * A schedule's webhook call: the run's summary as JSON, signed with HMAC-SHA256 of the schedule's
 * secret over `<timestamp>.<body>` (the `Forecast-Signature` header), so a receiver can check
 * both who sent it and that it is fresh. Temporal retries a failed call with backoff; a refusal
 * that retrying cannot change (a 4xx other than 408 and 429) is not retried.
 */

export const SIGNATURE_HEADER = 'forecast-signature';
const TIMEOUT_MS = 10_000;

export interface RunSummary {
  event: 'scheduled_run.finished';
  schedule_id: string;
  job_id: string;
  model: string;
  scheduled_at: string;
  started_at: string;
  finished_at: string;
  status: Exclude<RunStatus, 'in_progress'>;
  error: { code: string; message: string } | null;
  /** Pooled accuracy per model and target (empty unless completed). */
  metrics: AccuracyRow[];
  alert: (StoredAlert & { crossed: boolean }) | null;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

export async function sendWebhook(webhook: { url: string; secret: string }, summary: RunSummary, hosts: readonly string[]): Promise<void> {
  const refusal = webhookRefusal(webhook.url, hosts);
  if (refusal) throw ApplicationFailure.nonRetryable(`the webhook URL ${refusal}`, 'webhook_refused');
  const body = JSON.stringify(summary);
  let response: Response;
  try {
    response = await fetch(webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature(webhook.secret, body, Math.floor(Date.now() / 1000)) },
      body,
      // Never follow a redirect: it could lead off the allowed hosts.
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw ApplicationFailure.retryable(`the webhook could not be reached: ${(err as Error).message}`, 'webhook_unreachable');
  }
  await response.body?.cancel();
  if (response.ok) return;
  const message = `the webhook answered ${response.status}`;
  const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
  throw retryable ? ApplicationFailure.retryable(message, 'webhook_failed') : ApplicationFailure.nonRetryable(message, 'webhook_refused');
}
