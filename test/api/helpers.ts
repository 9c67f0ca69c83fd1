import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { KeyResolver } from '../../api/auth.ts';
import type { JobService } from '../../api/jobs/job-service.ts';
import { buildServer } from '../../api/server.ts';
import { loadConfig, type Config } from '../../config.ts';
import type { Engine } from '../../engine/engine.ts';
import { EngineError } from '../../engine/errors.ts';
import { httpFieldErrors, STABLE_ROOTS, STATUS_OF_KIND, type FieldRoots } from '../../api/problem.ts';
import { testTempDir } from '../temp-root.ts';

export const KEY = 'test-key-alice';
export const AUTH = { authorization: `Bearer ${KEY}` };

export function tempDataDir(): string {
  return testTempDir('forecast-test-');
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ FORECAST_API_KEYS: `alice:${KEY},bob:test-key-bob`, DATA_DIR: tempDataDir(), RATE_LIMIT_PER_SECOND: '0' }), ...overrides };
}

/** A test server; without an engine it runs its own, closed with it. */
export async function testServer(overrides: Partial<Config> = {}, keyResolver?: KeyResolver, jobs?: JobService, engine?: Engine): Promise<FastifyInstance> {
  return buildServer(testConfig(overrides), { keyResolver, jobs, engine });
}

/** A test server for the calling file: built before its tests, closed (with its model threads) after. */
export function useTestServer(overrides: Partial<Config> = {}): { app: FastifyInstance } {
  const server = {} as { app: FastifyInstance };
  beforeAll(async () => {
    server.app = await testServer(overrides);
  });
  afterAll(async () => {
    await server.app?.close();
  });
  return server;
}

/** A small valid request: one daily series of 10 values. */
export function dailyRequest(extra: Record<string, unknown> = {}, serie: Record<string, unknown> = {}) {
  const target = [3, 5, 4, 6, 5, 7, 6, 8, 7, 9];
  const index = target.map((_, i) => `2024-01-${String(i + 1).padStart(2, '0')}`);
  return { series: [{ target, index, ...serie }], horizon: 3, freq: 'D', ...extra };
}

/** Hourly series with a daily cycle, `count` of them over one index of `length` steps. */
export function hourlySeries(count: number, length: number) {
  const index = Array.from({ length }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 3_600_000).toISOString().slice(0, 19));
  return Array.from({ length: count }, (_, k) => ({
    target: index.map((_, t) => 100 + k + 20 * Math.sin((2 * Math.PI * t) / 24) + ((t * 7919 + k * 104729) % 13)),
    index,
  }));
}

/** An engine error as the API answers it: its status, code and field errors at HTTP paths. */
export function asProblem(error: unknown, roots: FieldRoots = STABLE_ROOTS) {
  if (!(error instanceof EngineError)) throw error;
  return { status: STATUS_OF_KIND[error.kind], code: error.kind, message: error.message, errors: error.fields && httpFieldErrors(error.fields, roots) };
}
