/**
 * What the foundation model tests through the service share: a server configuration reading the
 * models of a folder, the request bodies they send, and the checks every model passes the same
 * way (the beta interface gives the adapter's numbers; a model missing from MODELS_DIR is refused
 * with how to export it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Config } from '../../../config.ts';
import { BetaResponse } from '../../../engine/beta/response.ts';
import type { Runner } from '../../../models/families/foundation/onnx-session.ts';
import { requireInstalled, type FoundationName, type ManifestOf } from '../../../models/families/foundation/model-store.ts';
import type { ForecastOutput, ForecastTask } from '../../../models/contract/model-interface.ts';
import { operatorHint } from '../../../models/contract/model-registry.ts';
import { AUTH, testConfig, testServer, useTestServer } from '../../api/helpers.ts';
import { filePart, postBeta, queryPart, RETAIL, retailQuery, tempDir, writeParquet } from '../../beta/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../../jobs/temporal-env.ts';
import { FIXTURES_DIR } from './reference.ts';

/** A test configuration whose MODELS_DIR is `dir`. */
export function withModels(dir: string): Config {
  const config = testConfig();
  return { ...config, engine: { ...config.engine, models: { ...config.engine.models, modelsDir: dir } } };
}

/**
 * A jobs stack (Temporal test server and worker) serving the fixture models, for the calling file
 * or block: started before its tests, stopped after. `taskQueue` keeps files apart.
 */
export function useFixtureJobsStack(taskQueue: string): { app: FastifyInstance } {
  const served = {} as { app: FastifyInstance };
  let stack: JobsStack | undefined;
  beforeAll(async () => {
    stack = await startJobsStack(withModels(FIXTURES_DIR), taskQueue, 2);
    served.app = stack.app;
  }, 120_000);
  afterAll(() => stack?.stop());
  return served;
}

/** A server of the fixture models, and the RETAIL rows as a Parquet file to upload to it. */
export function useFixtureServerWithRetail(): { readonly app: FastifyInstance; readonly retail: string } {
  const server = useTestServer(withModels(FIXTURES_DIR));
  const retail = useRetailParquet();
  return {
    get app() {
      return server.app;
    },
    get retail() {
      return retail.file;
    },
  };
}

/**
 * A server whose MODELS_DIR is an empty folder, for the calling block: `dir` is that folder.
 * Built before its tests; closed and the folder removed after.
 */
export function useServerWithoutModels(): { app: FastifyInstance; dir: string } {
  const bare = {} as { app: FastifyInstance; dir: string };
  beforeAll(async () => {
    bare.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'models-'));
    bare.app = await testServer(withModels(bare.dir));
  });
  afterAll(async () => {
    await bare.app?.close();
    fs.rmSync(bare.dir, { recursive: true, force: true });
  });
  return bare;
}

/** `n` hourly values from 2024-01-01 00:00 with a daily cycle; `phase` shifts the cycle. */
export function hourlySeries(n: number, phase = 0) {
  const target = Array.from({ length: n }, (_, i) => +(100 + 20 * Math.sin((2 * Math.PI * (i + phase)) / 24) + (i % 7)).toFixed(3));
  const index = Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1, i)).toISOString().slice(0, 19));
  return { target, index };
}

/** A POST /forecast body of two hourly series (90 and 30 hours), 40 hours ahead; `extra` overrides. */
export const hourlyForecastBody = (extra: Record<string, unknown> = {}) => ({
  series: [hourlySeries(90), hourlySeries(30, 5)],
  horizon: 40,
  freq: 'H',
  quantiles: [0.1, 0.5, 0.9],
  ...extra,
});

/** `n` daily values from 2024-01-01 with a weekly cycle and a slight trend. */
export const dailySeries = (n: number) => ({
  target: Array.from({ length: n }, (_, i) => +(50 + 10 * Math.sin((2 * Math.PI * i) / 7) + 0.2 * i).toFixed(3)),
  index: Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10)),
});

/** A POST /forecast body of two daily series (60 and 20 days), two weeks ahead; `extra` overrides. */
export const dailyForecastBody = (extra: Record<string, unknown> = {}) => ({
  series: [dailySeries(60), dailySeries(20)],
  horizon: 14,
  freq: 'D',
  quantiles: [0.1, 0.5, 0.9],
  ...extra,
});

/** The RETAIL rows as a Parquet file, written before the calling block's tests, removed after. */
export function useRetailParquet(): { file: string } {
  const dir = tempDir('retail-');
  const retail = {} as { file: string };
  beforeAll(async () => {
    retail.file = await writeParquet(path.join(dir, 'retail.parquet'), RETAIL);
  });
  return retail;
}

export const postForecast = (app: FastifyInstance, model: string, body: unknown) =>
  app.inject({ method: 'POST', url: `/forecast?model=${model}`, headers: AUTH, payload: body as object });

/**
 * For a model that takes no covariates: historical variables in `body` and generated covariates
 * are both refused with a 422, never dropped silently.
 */
export async function expectCovariatesRefused(app: FastifyInstance, model: string, body: { series: { target: number[] }[] }): Promise<void> {
  const res = await postForecast(app, model, { ...body, series: body.series.map((s) => ({ ...s, hist_variables: { load: s.target } })) });
  expect(res.statusCode).toBe(422);
  expect(res.json().errors[0].path).toBe('body.series[0].hist_variables');
  const generated = await postForecast(app, model, { ...body, covariates: [{ type: 'temporal_features', config: { components: ['dayofweek'] } }] });
  expect(generated.statusCode).toBe(422);
}

/**
 * Equal up to float32 arithmetic: the service splits independent series across its threads (and
 * a job across chunks), so a series may share its network call with other rows than here (and
 * TimesFM then sends another count of padded patches); sums in another order differ in the last
 * float32 digits, about 1e-6 of the series' level (its mean absolute value), never more.
 */
export function expectCloseAtLevel(got: (number | null)[], expected: ArrayLike<number>, target: number[]): void {
  const level = target.reduce((sum, v) => sum + Math.abs(v), 0) / target.length;
  expect(got).toHaveLength(expected.length);
  got.forEach((g, i) => expect(Math.abs(g! - expected[i])).toBeLessThanOrEqual(1e-5 * Math.max(1, level, Math.abs(expected[i]))));
}

/** Within 1e-4 of the expected values, relatively. */
export function expectWithin1e4(got: (number | null)[], expected: ArrayLike<number>): void {
  expect(got).toHaveLength(expected.length);
  got.forEach((g, t) => expect(Math.abs(g! - expected[t])).toBeLessThanOrEqual(1e-4 * Math.abs(expected[t])));
}

/**
 * Checks POST /forecast's answer to `body` (quantiles 0.1, 0.5 and 0.9) against the adapter's
 * forecasts of its series: the mean and each quantile, `body.horizon` steps, at the float32
 * tolerance. With `pointOnly` every quantile is compared with the adapter's mean (a model that
 * forecasts a point answers it for every quantile).
 */
export function expectForecastsMatchAdapter(
  answer: { series: { prediction: Record<string, number[]>; index: string[] }[][] },
  expected: ForecastOutput[],
  body: { series: { target: number[] }[]; horizon: number },
  pointOnly = false,
): void {
  answer.series.forEach(([p], i) => {
    expect(Object.keys(p.prediction)).toEqual(['mean', '0.1', '0.5', '0.9']);
    expect(p.index).toHaveLength(body.horizon);
    expectCloseAtLevel(p.prediction.mean, expected[i].mean, body.series[i].target);
    ['0.1', '0.5', '0.9'].forEach((k, j) =>
      expectCloseAtLevel(p.prediction[k], pointOnly ? expected[i].mean : expected[i].quantiles[j], body.series[i].target),
    );
  });
}

/**
 * Runs `body` as a job of `model` and checks it completes with the numbers POST /forecast gives,
 * mean and quantiles, `forecastsPerSeries` forecasts each (backtest dates included). The body's
 * first series must have a backtest date inside its history: that forecast has true values, so
 * its metrics are computed.
 */
export async function expectJobMatchesForecast(
  app: FastifyInstance,
  model: string,
  body: { series: { target: number[] }[] },
  forecastsPerSeries: number[],
): Promise<void> {
  const submitted = await app.inject({ method: 'POST', url: `/forecast-jobs?model=${model}`, headers: AUTH, payload: body });
  expect(submitted.statusCode, submitted.body).toBe(200);
  const id = submitted.json().job_id;
  const done = await until(
    async () => {
      const res = (await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json();
      return res.status !== 'in_progress' && res;
    },
    60_000,
    `job ${id}`,
  );
  expect(done.status).toBe('completed');
  const sync = (await postForecast(app, model, body)).json();
  expect(done.series.map((s: unknown[]) => s.length)).toEqual(forecastsPerSeries);
  done.series.forEach((s: { prediction: Record<string, number[]> }[], i: number) =>
    s.forEach((p, j) => {
      for (const key of ['mean', '0.1', '0.5', '0.9']) expectCloseAtLevel(p.prediction[key], sync.series[i][j].prediction[key], body.series[i].target);
    }),
  );
  expect(done.series[0][0].metrics).not.toBeNull();
}

/** A foundation model's adapter: its forecasts of `tasks` through an ONNX Runtime runner. */
export type Adapter<N extends FoundationName> = (run: Runner, manifest: ManifestOf<N>, tasks: readonly ForecastTask[]) => Promise<ForecastOutput[]>;

/** What the adapter gives for `tasks`, run in this thread on a session of the committed fixture. */
export async function forecastOnFixture<N extends FoundationName>(model: N, adapter: Adapter<N>, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  const installed = requireInstalled(model, FIXTURES_DIR);
  const session = await ort.InferenceSession.create(installed.onnxPath);
  try {
    return await adapter((feeds) => session.run(feeds), installed.manifest, tasks);
  } finally {
    await session.release();
  }
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A body's series as the feature-table models' tasks read them: timestamps `step` ms apart from each series' first index entry (UTC). */
export interface TimedBody {
  series: { target: number[]; index: string[]; future_variables?: Record<string, (number | string)[]>; hist_variables?: Record<string, number[]> }[];
  horizon: number;
  quantiles: number[];
}

/** Tasks of a body's series with the times of their index and horizon (the calendar features read them). */
export function timedTasksOf(body: TimedBody, step: number): ForecastTask[] {
  return body.series.map((s) => {
    const start = Date.parse(`${s.index[0]}Z`);
    const hasCovariates = s.future_variables || s.hist_variables;
    return {
      history: Float64Array.from(s.target),
      horizon: body.horizon,
      quantiles: body.quantiles,
      seasonLength: 1,
      times: Float64Array.from({ length: s.target.length + body.horizon }, (_, i) => start + i * step),
      ...(hasCovariates && { covariates: { hist: s.hist_variables ?? {}, static: {}, future: s.future_variables ?? {} } }),
    };
  });
}

export interface BetaComparison {
  /**
   * Whether the model forecasts a point only, which the service answers for every quantile: then
   * each quantile is compared with the adapter's mean, not with its quantile.
   */
  pointOnly?: boolean;
  /** How close a forecast must be to the adapter's (`history` is the series'); within 1e-4 unless given. */
  expectClose?: (got: (number | null)[], expected: ArrayLike<number>, history: number[]) => void;
  /** The adapter reads the series' timestamps (calendar features): the expected forecast gets RETAIL's days. */
  timed?: boolean;
}

/**
 * Uploads the RETAIL Parquet at `retailPath` with a store roll-up of the skus through the beta
 * interface, and checks the forecast of store a, sku 2 against the adapter's on the fixture.
 */
export async function expectBetaMatchesAdapter<N extends FoundationName>(
  app: FastifyInstance,
  model: N,
  retailPath: string,
  adapter: Adapter<N>,
  { pointOnly = false, expectClose = expectWithin1e4, timed = false }: BetaComparison = {},
): Promise<void> {
  const res = await postBeta(app, [queryPart(retailQuery({}, { hierarchies: { sku: [['store']] } })), filePart('sales', retailPath)], model);
  expect(res.statusCode, res.body).toBe(200);
  const { data } = BetaResponse.parse(res.json());
  expect(data.time).toHaveLength(18); // 4 (store, sku) series and 2 store roll-ups, 3 days each
  const rows = data.time.map((_, i) => i).filter((i) => data.identifiers.store[i] === 'a' && data.identifiers.sku[i] === '2');
  // Store a, sku 2: sales 10, 20, ..., 140 over the 14 days from 2024-01-01 (RETAIL).
  const history = Float64Array.from({ length: 14 }, (_, d) => (d + 1) * 10);
  const index = Array.from(history, (_, d) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 19));
  const tasks = timed
    ? timedTasksOf({ series: [{ target: Array.from(history), index }], horizon: 3, quantiles: [0.1, 0.9] }, DAY)
    : [{ history, horizon: 3, quantiles: [0.1, 0.9], seasonLength: 7 }];
  const [expected] = await forecastOnFixture(model, adapter, tasks);
  const forecast = (key: string) => rows.map((i) => data.targets.sales.quantiles[key][i]);
  expectClose(forecast('mean'), expected.mean, Array.from(history));
  expectClose(forecast('0.1'), pointOnly ? expected.mean : expected.quantiles[0], Array.from(history));
  expectClose(forecast('0.9'), pointOnly ? expected.mean : expected.quantiles[1], Array.from(history));
}

/**
 * A horizon outside what the installed export forecasts (`inRange` forecasts, `outOfRange` does
 * not) is refused before anything runs, at the field that sets it: `body.horizon` of
 * POST /forecast and of a job submission (where `app` serves jobs), `body.query.prediction_length`
 * of the beta interface;
 * the message names the horizon and the limit (`limit`, e.g. "at most 63 steps").
 */
export async function expectHorizonRefused(
  app: FastifyInstance,
  model: FoundationName,
  { inRange, outOfRange, limit, jobs = false }: { inRange: number; outOfRange: number; limit: string; jobs?: boolean },
): Promise<void> {
  const ok = await postForecast(app, model, dailyForecastBody({ horizon: inRange }));
  expect(ok.statusCode, ok.body).toBe(200);
  const message = `horizon ${outOfRange} is out of range for ${model}: it forecasts ${limit} steps`;
  const body = dailyForecastBody({ horizon: outOfRange });
  const answers: [string, Awaited<ReturnType<typeof postForecast>>][] = [
    ['body.horizon', await postForecast(app, model, body)],
    ['body.query.prediction_length', await postBeta(app, [queryPart(retailQuery({ prediction_length: `${outOfRange}d` }))], model)],
  ];
  if (jobs) answers.push(['body.horizon', await app.inject({ method: 'POST', url: `/forecast-jobs?model=${model}`, headers: AUTH, payload: body })]);
  for (const [field, res] of answers) {
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().code).toBe('invalid_request');
    expect(res.json().errors).toEqual([{ path: field, message: expect.stringContaining(message) }]);
  }
}

/**
 * Declares the tests of `model` missing from MODELS_DIR (an empty folder): POST /forecast (with
 * `body`), GET /warmup and the beta interface answer 422 model_unavailable saying it is not
 * installed on this server, naming no server path, never "no adapter" (which is for names the
 * server cannot run at all); the operator's hint names the folder and the export command.
 * `more` declares further tests on that server.
 */
export function describeNotInstalled(model: FoundationName, body: object, more?: (bare: { readonly app: FastifyInstance }) => void): void {
  describe(`${model} not installed`, () => {
    const bare = useServerWithoutModels();

    test('answers 422 model_unavailable saying it is not installed here, naming no server path, never "no adapter"', async () => {
      const answers = [
        await postForecast(bare.app, model, body),
        await bare.app.inject({ method: 'GET', url: `/warmup?model=${model}`, headers: AUTH }),
        await postBeta(bare.app, [queryPart(retailQuery())], model),
      ];
      for (const res of answers) {
        expect(res.statusCode).toBe(422);
        expect(res.json().code).toBe('model_unavailable');
        expect(res.json().detail).toContain(`model '${model}' is not available on this server: its exported model is not installed on this server`);
        expect(res.body).not.toContain(bare.dir);
        expect(res.json().detail).not.toContain('no adapter');
      }
      const hint = operatorHint(model, withModels(bare.dir).engine.models);
      expect(hint).toContain(path.join(bare.dir, model));
      expect(hint).toContain(`python tools/export/export.py ${model} --checkpoint`);
    });

    more?.(bare);
  });
}
