/**
 * The service's configuration: the one place the environment is read (docs/operations.md, "Configuration").
 * The entry points (bin/) call `loadConfig` once and pass the result down; nothing else reads
 * `process.env`, and worker threads receive their share of it through `workerData`.
 * It and its parts in config/ import nothing else of the project, so every layer may import its types.
 */
import os from 'node:os';
import path from 'node:path';
import { readSetting, type Environment } from './config/setting-file.ts';
import { modelInstallConfig, type ModelInstallConfig } from './config/model-install-config.ts';
import { scheduleConfig, type ScheduleConfig } from './config/schedule-config.ts';
import { temporalConfig, type TemporalConfig } from './config/temporal-config.ts';

export type { Environment } from './config/setting-file.ts';
export type { ModelInstallConfig } from './config/model-install-config.ts';
export type { ScheduleConfig } from './config/schedule-config.ts';
export type { TemporalConfig, TemporalTls } from './config/temporal-config.ts';

export interface Config {
  port: number;
  host: string;
  /** SHUTDOWN_GRACE: how long a stopping process lets in-flight requests and job chunks finish (docs/operations.md, "Shutdown"). */
  shutdownGraceMs: number;
  /** DATA_DIR: the service's files (API keys, jobs, results, uploads). */
  dataDir: string;
  /** `principal:key` pairs from FORECAST_API_KEYS, for development and tests. */
  envKeys: { principal: string; key: string }[];
  defaultModel: string;
  rateLimit: { perSecond: number; burst: number };
  maxBodyBytes: number;
  /** Per-principal quotas (docs/operations.md, "Limits and quotas"): QUOTA_* and QUOTA_OVERRIDES; 0 is no limit. */
  quotas: QuotaConfig;
  /** IDEMPOTENCY_KEY_TTL: how long an Idempotency-Key of a job submission is remembered. */
  idempotencyKeyTtlMs: number;
  /** Failed authentications per client address: beyond `limit` within `windowMs`, 429 (AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW; limit 0: off). */
  authFailures: { limit: number; windowMs: number };
  /** TRUST_PROXY: Fastify's `trustProxy`, so that the client address is the one a reverse proxy forwards. */
  trustProxy: boolean | number | string;
  /** What the forecasting engine needs: model threads, installed models, float data sources. */
  engine: {
    /** MODEL_THREADS: worker threads that fit and run models. */
    modelThreads: number;
    models: {
      /** MODELS_DIR: exported foundation models, one folder per model name (default DATA_DIR/models). */
      modelsDir: string;
      /** ONNX_THREADS: intra-op threads of each ONNX Runtime session (default: the cores shared among the model threads). */
      onnxThreads: number;
      /** ONNX_EXECUTION_PROVIDERS: the execution providers sessions use, in order; null lets the server choose (CUDA when it can start, else the CPU). */
      executionProviders: string[] | null;
    };
    /** FLOAT_SOURCES_DIR: registered float data sources (default DATA_DIR/float-sources). */
    floatSourcesDir: string;
  };
  /** Where Temporal is and how to reach it (config/temporal-config.ts). */
  temporal: TemporalConfig;
  /** Where jobs' inputs, chunk inputs, metadata and results live (docs/operations.md, "Storage"). */
  storage: StorageConfig;
  jobs: {
    forecastsPerChunk: number;
    parallelism: number;
    heartbeatTimeoutMs: number;
    /** JOB_CHUNKS_PER_RUN: chunks a job's workflow run starts before it continues as new (bounds its history). */
    chunksPerRun: number;
    /** JOB_RETENTION: finished jobs older than this many milliseconds are deleted; null keeps them. */
    retentionMs: number | null;
  };
  /** POST /v1-beta/forecast (docs/api.md, "Beta API"). */
  beta: {
    /** Largest multipart upload, all parts together; larger is 413. */
    maxUploadBytes: number;
    /** Root of local locator sources; null (unset) refuses locators of local files. */
    dataRoot: string | null;
    /** Object-store URL schemes DuckDB may read for locator sources; empty refuses them. */
    objectStores: string[];
    /** DuckDB's memory limit for the schema logic (`2GB`); beyond it DuckDB spills to DATA_DIR. Null: DuckDB's default, 80% of RAM. */
    duckdbMemoryLimit: string | null;
    /** BETA_DUCKDB_INIT: the SQL of a file run when the beta database opens (object-store secrets and settings). */
    duckdbInitSql: string | null;
  };
  /** Scheduled backtests (docs/api.md, "Scheduled backtests"). */
  schedules: ScheduleConfig;
  /** `models install`: the Hub that checkpoints come from, and where they are downloaded (config/model-install-config.ts). */
  modelInstall: ModelInstallConfig;
}

/** What one principal may ask for; 0 means no limit. */
export interface Quotas {
  /** Jobs in progress (queued or running) at once; beyond it a submission is 429. */
  concurrentJobs: number;
  /** Series in one stable request (POST /forecast, job submissions); beyond it 413. */
  seriesPerRequest: number;
  /** Forecasts (series x creation dates) in one forecast job; beyond it 413. */
  forecastsPerJob: number;
  /** Bytes of one request body, or of one beta upload's data parts; beyond it 413. */
  uploadBytes: number;
  /** Scheduled backtests the principal keeps at once; beyond it creating one is 429. */
  schedules: number;
}

export interface QuotaConfig {
  defaults: Quotas;
  /** QUOTA_OVERRIDES: a principal's own values, replacing the defaults they name. */
  byPrincipal: Record<string, Partial<Quotas>>;
}

/** Each quota's name in QUOTA_OVERRIDES and in the `limit` member of a refusal. */
export const QUOTA_NAMES: Record<keyof Quotas, string> = {
  concurrentJobs: 'concurrent_jobs',
  seriesPerRequest: 'series_per_request',
  forecastsPerJob: 'forecasts_per_job',
  uploadBytes: 'upload_bytes',
  schedules: 'schedules',
};

export interface StorageConfig {
  /** STORAGE_URL: `file:///path` (default: DATA_DIR) or `s3://bucket/prefix`. */
  url: string;
  /** For `s3://` stores; credentials come from the AWS SDK's usual chain (environment, shared files, roles). */
  s3: {
    /** AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL: a self-hosted or non-AWS store; null is AWS S3. */
    endpoint: string | null;
    /** AWS_REGION or AWS_DEFAULT_REGION (default us-east-1). */
    region: string;
    /** STORAGE_S3_PATH_STYLE: `host/bucket/key` addressing; on by default when an endpoint is set. */
    pathStyle: boolean;
    /** AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; null leaves them to the SDK's chain (AWS_PROFILE, roles). */
    credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
    /**
     * How long one request may wait for a connection, then for the store's next bytes, before it
     * fails and counts as the store being away (503 `storage_unavailable`, a chunk retried).
     */
    timeouts: { connectMs: number; idleMs: number };
  };
}

function integer(env: Environment, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  // Digits only: Number() would also take `1.5`, `0x10`, `1e3` and a blank as a number (a blank PORT listened on any port).
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be a whole number >= ${min}; got '${raw}'`);
  return value;
}

const MS_PER_UNIT = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const UNIT_NAMES: Record<keyof typeof MS_PER_UNIT, string> = { ms: 'milliseconds', s: 'seconds', m: 'minutes', h: 'hours', d: 'days' };

/** The forms a duration setting takes: its units and, for SHUTDOWN_GRACE, bare (fractional, or 0) seconds. */
interface DurationForm {
  readonly units: readonly (keyof typeof MS_PER_UNIT)[];
  readonly examples: string;
  readonly bareSeconds?: boolean;
}

/**
 * A duration setting in milliseconds: a whole number >= 1 with one of the form's units (`90m`,
 * `24h`), or with `bareSeconds` any number >= 0, a unit optional (`1.5`, `500ms`). Unset or empty
 * is the fallback; anything else stops the start naming the variable.
 */
function duration<F extends number | null>(env: Environment, name: string, fallback: F, form: DurationForm): number | F {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^(\d+(?:\.\d+)?)([a-z]*)$/.exec(raw.trim());
  const unit = (match?.[2] || (form.bareSeconds ? 's' : '')) as keyof typeof MS_PER_UNIT;
  const amount = Number(match?.[1]);
  const valid = match !== null && form.units.includes(unit) && (form.bareSeconds || (Number.isInteger(amount) && amount >= 1));
  if (!valid) {
    const names = form.units.map((u) => UNIT_NAMES[u]);
    const wholeUnits = `a whole number of ${names.slice(0, -1).join(', ')} or ${names.at(-1)} (${form.examples})`;
    const kinds = form.bareSeconds ? `a duration such as ${form.examples} (a plain number is seconds)` : wholeUnits;
    throw new Error(`${name} must be ${kinds}; got '${raw}'`);
  }
  return Math.round(amount * MS_PER_UNIT[unit]);
}

const EVERY_WHOLE_UNIT: DurationForm = { units: ['s', 'm', 'h', 'd'], examples: '30s, 15m, 24h, 7d' };

/** A whole number >= 0 (quotas, counts), else the start stops naming the variable. */
function count(env: Environment, name: string, fallback: number): number {
  const value = integer(env, name, fallback);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be a whole number >= 0; got '${env[name]}'`);
  return value;
}

/** QUOTA_OVERRIDES: `{"alice": {"concurrent_jobs": 50, "upload_bytes": 0}}`; names and values are checked at start. */
function quotaOverrides(raw: string | undefined): QuotaConfig['byPrincipal'] {
  if (raw === undefined || raw.trim() === '') return {};
  const example = `for example {"alice": {"concurrent_jobs": 50, "upload_bytes": 0}}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new Error(`QUOTA_OVERRIDES must be JSON, ${example}: ${(error as Error).message}`);
  }
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(parsed)) throw new Error(`QUOTA_OVERRIDES must be an object of principal -> quotas, ${example}`);
  const fields = Object.fromEntries(Object.entries(QUOTA_NAMES).map(([field, name]) => [name, field as keyof Quotas]));
  const byPrincipal: QuotaConfig['byPrincipal'] = {};
  for (const [principal, quotas] of Object.entries(parsed)) {
    if (!isObject(quotas)) throw new Error(`QUOTA_OVERRIDES.${principal} must be an object of quotas, ${example}`);
    byPrincipal[principal] = {};
    for (const [name, value] of Object.entries(quotas)) {
      if (!fields[name]) throw new Error(`QUOTA_OVERRIDES.${principal}.${name} is not a quota; the quotas are ${Object.values(QUOTA_NAMES).join(', ')}`);
      if (!Number.isSafeInteger(value) || (value as number) < 0)
        throw new Error(`QUOTA_OVERRIDES.${principal}.${name} must be a whole number >= 0 (0: no limit); got ${JSON.stringify(value)}`);
      byPrincipal[principal][fields[name]] = value as number;
    }
  }
  return byPrincipal;
}

/** TRUST_PROXY: unset or `false`: none; `true`: every proxy; a number: that many hops; otherwise addresses or CIDRs, comma-separated. */
function trustProxy(raw: string | undefined): Config['trustProxy'] {
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'false') return false;
  if (raw.trim() === 'true') return true;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  return raw.trim();
}

/**
 * The execution provider names of ONNX Runtime's Node.js builds, across platforms. Whether this
 * machine can start one is checked when a session is made (docs/decisions/073-execution-provider-override.md).
 */
export const ONNX_EXECUTION_PROVIDER_NAMES = ['cpu', 'cuda', 'tensorrt', 'webgpu', 'dml', 'coreml', 'qnn'] as const;

/** ONNX_EXECUTION_PROVIDERS: `cuda,cpu`; unset or empty is null (automatic); an unknown or repeated name stops the start. */
function executionProviders(raw: string | undefined): string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const names = raw.split(',').map((name) => name.trim().toLowerCase());
  const known: readonly string[] = ONNX_EXECUTION_PROVIDER_NAMES;
  for (const name of names) {
    if (!known.includes(name)) {
      throw new Error(
        `ONNX_EXECUTION_PROVIDERS names '${name}', which is not an ONNX Runtime execution provider; use ${known.join(', ')} (for example cuda,cpu)`,
      );
    }
  }
  if (new Set(names).size !== names.length) throw new Error(`ONNX_EXECUTION_PROVIDERS names a provider twice; got '${raw}'`);
  return names;
}

/** A thread count: unset takes the fallback; anything but a whole number from 1 stops the start (it used to fall back silently). */
function threads(env: Environment, name: string, fallback: number): number {
  return integer(env, name, fallback, 1);
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

function storageConfig(env: Environment, dataDir: string): StorageConfig {
  const url = env.STORAGE_URL || `file://${dataDir}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`STORAGE_URL must be a URL (file:///path or s3://bucket/prefix); got '${url}'`);
  }
  if (parsed.protocol !== 'file:' && parsed.protocol !== 's3:') throw new Error(`STORAGE_URL must start with file:// or s3://; got '${url}'`);
  if (parsed.protocol === 's3:' && !parsed.host) throw new Error(`STORAGE_URL must name a bucket (s3://bucket/prefix); got '${url}'`);
  // `file:data` reads as /data and `file://data/jobs` names a host: a relative folder cannot be a file URL.
  if (parsed.protocol === 'file:' && (!url.startsWith('file://') || (parsed.host !== '' && parsed.host !== 'localhost')))
    throw new Error(`STORAGE_URL must be an absolute file URL (file:///path/to/store); got '${url}'`);
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || null;
  const pathStyle = env.STORAGE_S3_PATH_STYLE;
  if (pathStyle !== undefined && pathStyle !== '' && pathStyle !== 'true' && pathStyle !== 'false') {
    throw new Error(`STORAGE_S3_PATH_STYLE must be true or false; got '${pathStyle}'`);
  }
  return {
    url,
    s3: {
      endpoint,
      region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
      pathStyle: pathStyle ? pathStyle === 'true' : endpoint !== null,
      credentials:
        env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
          ? {
              accessKeyId: env.AWS_ACCESS_KEY_ID,
              secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
              ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
            }
          : null,
      timeouts: { connectMs: 5_000, idleMs: 30_000 },
    },
  };
}

/** The configuration from the environment (the process's, unless another is given: tests, tools). */
export function loadConfig(env: Environment = process.env): Config {
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const cores = Math.max(1, os.availableParallelism());
  const modelThreads = threads(env, 'MODEL_THREADS', cores);
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST || '0.0.0.0',
    // Below the 30 s Kubernetes waits after SIGTERM by default, so the drain ends before a SIGKILL.
    shutdownGraceMs: duration(env, 'SHUTDOWN_GRACE', 25_000, { units: ['ms', 's', 'm'], examples: '25s, 500ms or 2m', bareSeconds: true }),
    dataDir,
    envKeys: parseApiKeys(env.FORECAST_API_KEYS),
    // A model every server runs, fast on any history (docs/decisions/014-default-model-aets.md: not
    // the reference's t0-beta, which no server can run without its weights).
    defaultModel: env.DEFAULT_MODEL || 'aets',
    rateLimit: { perSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 10), burst: integer(env, 'RATE_LIMIT_BURST', 50, 1) },
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 64 * 1024 * 1024, 1024),
    quotas: {
      // Defaults that leave room for the benchmarked backtests while no single principal can take the workers or memory.
      defaults: {
        concurrentJobs: count(env, 'QUOTA_CONCURRENT_JOBS', 20),
        seriesPerRequest: count(env, 'QUOTA_SERIES_PER_REQUEST', 100_000),
        forecastsPerJob: count(env, 'QUOTA_FORECASTS_PER_JOB', 10_000_000),
        // 0: only MAX_BODY_BYTES and BETA_MAX_UPLOAD_BYTES, the server's own limits, apply.
        uploadBytes: count(env, 'QUOTA_UPLOAD_BYTES', 0),
        schedules: count(env, 'QUOTA_SCHEDULES', 20),
      },
      byPrincipal: quotaOverrides(env.QUOTA_OVERRIDES),
    },
    idempotencyKeyTtlMs: duration(env, 'IDEMPOTENCY_KEY_TTL', 24 * 3_600_000, EVERY_WHOLE_UNIT),
    authFailures: { limit: count(env, 'AUTH_FAILURE_LIMIT', 10), windowMs: duration(env, 'AUTH_FAILURE_WINDOW', 60_000, EVERY_WHOLE_UNIT) },
    trustProxy: trustProxy(env.TRUST_PROXY),
    engine: {
      modelThreads,
      models: {
        modelsDir: path.resolve(env.MODELS_DIR || path.join(dataDir, 'models')),
        // Each model thread gets an equal share of the cores, so concurrent batches do not oversubscribe the machine.
        onnxThreads: threads(env, 'ONNX_THREADS', Math.max(1, Math.floor(cores / modelThreads))),
        executionProviders: executionProviders(env.ONNX_EXECUTION_PROVIDERS),
      },
      floatSourcesDir: path.resolve(env.FLOAT_SOURCES_DIR || path.join(dataDir, 'float-sources')),
    },
    temporal: temporalConfig(env),
    storage: storageConfig(env, dataDir),
    jobs: {
      forecastsPerChunk: integer(env, 'JOB_CHUNK_FORECASTS', 64, 1),
      parallelism: integer(env, 'JOB_PARALLELISM', 8, 1),
      heartbeatTimeoutMs: integer(env, 'JOB_HEARTBEAT_TIMEOUT_MS', 30_000, 1_000),
      retentionMs: duration(env, 'JOB_RETENTION', null, { units: ['m', 'h', 'd'], examples: '90m, 12h, 30d' }),
      chunksPerRun: integer(env, 'JOB_CHUNKS_PER_RUN', 500, 1),
    },
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
    schedules: scheduleConfig(env),
    modelInstall: modelInstallConfig(env),
  };
}

/** What the `forecast` CLI needs to reach a service (docs/dashboard-and-cli.md, "Command line"); its flags override it. */
export interface ClientConfig {
  /** FORECAST_URL: the service's base URL (default http://127.0.0.1:PORT, PORT defaulting to 8080). */
  baseUrl: string;
  /** FORECAST_API_KEY: the caller's key; null when unset (a command that needs one says so). */
  apiKey: string | null;
}

/** The CLI's configuration from the environment; a service started in the same shell is found without flags. */
export function loadClientConfig(env: Environment = process.env): ClientConfig {
  return {
    baseUrl: env.FORECAST_URL || `http://127.0.0.1:${integer(env, 'PORT', 8080)}`,
    apiKey: env.FORECAST_API_KEY || null,
  };
}
