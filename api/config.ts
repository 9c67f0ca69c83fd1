import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { floatSourcesDir } from '../engine/covariates/float-sources.ts';
import { modelsDir } from '../models/foundation/store.ts';

/** Service configuration, read once from the environment (documented in the README). */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * MODELS_DIR: exported foundation models, one folder per model name (default DATA_DIR/models).
   * Worker threads resolve it from the same environment (models/foundation/store.ts).
   */
  modelsDir: string;
  /** `principal:key` pairs from FORECAST_API_KEYS, for development and tests. */
  envKeys: { principal: string; key: string }[];
  defaultModel: string;
  rateLimit: { perSecond: number; burst: number };
  maxBodyBytes: number;
  temporal: {
    /** An existing cluster; when unset the service starts its own dev server. */
    address: string | null;
    namespace: string;
    taskQueue: string;
    /** Port of the embedded dev server. */
    devPort: number;
    /** The `temporal` CLI used for the embedded dev server. */
    cliPath: string;
    /** Whether this process also runs a worker (off for API-only processes). */
    runWorker: boolean;
  };
  jobs: {
    forecastsPerChunk: number;
    parallelism: number;
    heartbeatTimeoutMs: number;
  };
  /**
   * Where float data sources are registered (FLOAT_SOURCES_DIR, default DATA_DIR/float-sources):
   * each Parquet or CSV file there is a `float` covariate's `data_source`. The engine reads the
   * same variable through the same rule (engine/covariates/float-sources.ts).
   */
  floatSourcesDir: string;
  /** POST /v1-beta/forecast (README, Beta API). */
  beta: {
    /** Largest multipart upload, all parts together; larger is 413. */
    maxUploadBytes: number;
    /** Root of local locator sources; null (unset) refuses locators of local files. */
    dataRoot: string | null;
    /** Object-store URL schemes DuckDB may read for locator sources; empty refuses them. */
    objectStores: string[];
    /** DuckDB's memory limit for the schema logic (`2GB`); beyond it DuckDB spills to DATA_DIR. Null: DuckDB's default, 80% of RAM. */
    duckdbMemoryLimit: string | null;
    /** BETA_DUCKDB_INIT: a SQL file run when the beta database opens (object-store secrets and settings). */
    duckdbInitSql: string | null;
  };
}

/** The text of a file named by a setting; a file that cannot be read stops the start with its name. */
function readSetting(name: string, file: string): string {
  try {
    return fs.readFileSync(path.resolve(file), 'utf8');
  } catch (error) {
    throw new Error(`${name}=${file} cannot be read: ${(error as Error).message}`);
  }
}

/** Where set-up (scripts/ensure-temporal-cli.sh) caches the Temporal CLI, outside the repo. */
export const defaultTemporalCli = (env: NodeJS.ProcessEnv = process.env): string =>
  env.TEMPORAL_CLI || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'forecasting-service', 'bin', 'temporal');

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}; got '${raw}'`);
  return value;
}

export function parseApiKeys(raw: string | undefined): Config['envKeys'] {
  if (!raw) return [];
  return raw
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf(':');
      if (at <= 0 || at === pair.length - 1) throw new Error(`FORECAST_API_KEYS entries are principal:key pairs; got '${pair}'`);
      return { principal: pair.slice(0, at), key: pair.slice(at + 1) };
    });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR || './data'),
    modelsDir: modelsDir(env),
    envKeys: parseApiKeys(env.FORECAST_API_KEYS),
    // The machine-readable reference names t0-beta as the default model (README, Decisions).
    defaultModel: env.DEFAULT_MODEL || 't0-beta',
    rateLimit: { perSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 10), burst: integer(env, 'RATE_LIMIT_BURST', 50, 1) },
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 64 * 1024 * 1024, 1024),
    temporal: {
      address: env.TEMPORAL_ADDRESS || null,
      namespace: env.TEMPORAL_NAMESPACE || 'default',
      taskQueue: env.TEMPORAL_TASK_QUEUE || 'forecast-jobs',
      devPort: integer(env, 'TEMPORAL_DEV_PORT', 7233, 1),
      cliPath: defaultTemporalCli(env),
      runWorker: env.RUN_WORKER !== 'false',
    },
    jobs: {
      forecastsPerChunk: integer(env, 'JOB_CHUNK_FORECASTS', 64, 1),
      parallelism: integer(env, 'JOB_PARALLELISM', 8, 1),
      heartbeatTimeoutMs: integer(env, 'JOB_HEARTBEAT_TIMEOUT_MS', 30_000, 1_000),
    },
    floatSourcesDir: floatSourcesDir(env),
    beta: {
      maxUploadBytes: integer(env, 'BETA_MAX_UPLOAD_BYTES', 512 * 1024 * 1024, 1024),
      dataRoot: env.BETA_DATA_ROOT ? path.resolve(env.BETA_DATA_ROOT) : null,
      objectStores: (env.BETA_OBJECT_STORES ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
      duckdbMemoryLimit: env.BETA_DUCKDB_MEMORY_LIMIT || null,
      duckdbInitSql: env.BETA_DUCKDB_INIT ? readSetting('BETA_DUCKDB_INIT', env.BETA_DUCKDB_INIT) : null,
    },
  };
}
