/**
 * The settings of scheduled backtests: which hosts a schedule's webhook may call. Part of
 * config.ts, the one place the environment is read.
 */
import type { Environment } from './setting-file.ts';

export interface ScheduleConfig {
  /**
   * SCHEDULE_WEBHOOK_HOSTS: the hosts (`host` or `host:port`, comma-separated) a webhook URL may
   * name. Empty refuses every webhook, so that no client can make the service call into its
   * network: docs/decisions/061-schedule-webhooks.md.
   */
  webhookHosts: string[];
}

export function scheduleConfig(env: Environment): ScheduleConfig {
  const hosts = (env.SCHEDULE_WEBHOOK_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const host of hosts) {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(host))
      throw new Error(`SCHEDULE_WEBHOOK_HOSTS must list hosts as host or host:port, comma-separated; got '${host}'`);
  }
  return { webhookHosts: hosts };
}
