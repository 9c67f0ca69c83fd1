import { expect, test } from 'vitest';
import { loadConfig } from '../config.ts';

test('JOB_RETENTION: minutes, hours or days; unset keeps jobs; anything else stops the start naming the variable', () => {
  expect(loadConfig({}).jobs.retentionMs).toBeNull();
  expect(loadConfig({ JOB_RETENTION: '90m' }).jobs.retentionMs).toBe(90 * 60_000);
  expect(loadConfig({ JOB_RETENTION: '12h' }).jobs.retentionMs).toBe(12 * 3_600_000);
  expect(loadConfig({ JOB_RETENTION: '30d' }).jobs.retentionMs).toBe(30 * 86_400_000);
  for (const bad of ['30', '0d', '1w', '-1d', 'soon']) expect(() => loadConfig({ JOB_RETENTION: bad })).toThrow(/JOB_RETENTION/);
});

test('TEMPORAL_UI_PORT: 1000 above the dev server by default, 0 for none', () => {
  expect(loadConfig({}).temporal.uiPort).toBe(8233);
  expect(loadConfig({ TEMPORAL_DEV_PORT: '17233' }).temporal.uiPort).toBe(18233);
  expect(loadConfig({ TEMPORAL_UI_PORT: '0' }).temporal.uiPort).toBe(0);
});

test('SHUTDOWN_GRACE: 25 s by default; milliseconds, seconds (also a plain number) or minutes; anything else stops the start naming the variable', () => {
  expect(loadConfig({}).shutdownGraceMs).toBe(25_000);
  expect(loadConfig({ SHUTDOWN_GRACE: '500ms' }).shutdownGraceMs).toBe(500);
  expect(loadConfig({ SHUTDOWN_GRACE: '30s' }).shutdownGraceMs).toBe(30_000);
  expect(loadConfig({ SHUTDOWN_GRACE: '1.5' }).shutdownGraceMs).toBe(1_500);
  expect(loadConfig({ SHUTDOWN_GRACE: '2m' }).shutdownGraceMs).toBe(120_000);
  expect(loadConfig({ SHUTDOWN_GRACE: '0' }).shutdownGraceMs).toBe(0);
  for (const bad of ['-1s', '1h', 'soon', '5 s']) expect(() => loadConfig({ SHUTDOWN_GRACE: bad })).toThrow(/SHUTDOWN_GRACE/);
});
