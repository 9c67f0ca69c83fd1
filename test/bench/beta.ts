/**
 * Beta interface benchmark: M4 Hourly (datasets/) as one long-form Parquet file written by
 * DuckDB, uploaded to POST /v1-beta/forecast over HTTP (loopback), forecast 48 hours from the
 * end of every series' training part.
 *
 *   npm run bench -- beta [--models aets,naive] [--limit N] [--replicate R] [--json FILE]
 *
 * `--replicate R` uploads every series R times (ids H1_0, H1_1, ...), to see how time and
 * memory grow with the upload.
 *
 * Reports, per model: wall time; the server's own split (Server-Timing) of upload, parsing and
 * schema logic in DuckDB, model time and response assembly; the share of parsing + schema logic
 * in the total (target: under 10% for aets); the peak RSS of the process above its idle level
 * while the upload is parsed and the schema logic runs, against the file's decoded size
 * (target: within 3x); and mean sMAPE against the M4 holdout, as a check that every series got
 * its own forecast.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DuckDBInstance, DuckDBTimestampValue } from '@duckdb/node-api';
import { buildServer } from '../../api/server.ts';
import { loadConfig } from '../../config.ts';
import { loadM4, type M4Series } from '../../datasets/m4.ts';
import { smape } from './m4-scores.ts';
import { benchOptions } from './options.ts';

const USAGE = 'usage: npm run bench -- beta [--models aets,naive] [--limit N] [--replicate R] [--json FILE]';
const KEY = 'bench-key';
const HOUR_MS = 3_600_000;
/** M4's synthetic index: hourly steps from 2016-01-01 for every series (datasets/README.md). */
const START_MS = Date.UTC(2016, 0, 1);

interface Written {
  file: string;
  rows: number;
  fileBytes: number;
  /** Bytes of the columns decoded: 8 per timestamp and value, the id strings and their 4-byte offsets. */
  decodedBytes: number;
}

/** The training rows of every series, long form (unique_id, ds, y), written with DuckDB's COPY. */
async function writeM4Parquet(series: M4Series[], file: string, replicate = 1): Promise<Written> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  let rows = 0;
  let idBytes = 0;
  try {
    await c.run('CREATE TABLE m4 (unique_id VARCHAR, ds TIMESTAMP, y DOUBLE)');
    const appender = await c.createAppender('m4');
    for (let r = 0; r < replicate; r++) {
      for (const s of series) {
        const id = replicate > 1 ? `${s.id}_${r}` : s.id;
        for (let k = 0; k < s.train.length; k++) {
          appender.appendVarchar(id);
          appender.appendTimestamp(new DuckDBTimestampValue(BigInt(START_MS + k * HOUR_MS) * 1000n));
          appender.appendDouble(s.train[k]);
          appender.endRow();
        }
        rows += s.train.length;
        idBytes += s.train.length * Buffer.byteLength(id);
      }
    }
    appender.closeSync();
    await c.run(`COPY m4 TO '${file}' (FORMAT parquet)`);
  } finally {
    c.closeSync();
    db.closeSync();
  }
  return { file, rows, fileBytes: fs.statSync(file).size, decodedBytes: rows * (8 + 8 + 4) + idBytes };
}

const query = {
  input: {
    source: { uri: 'inline://m4' },
    columns: { unique_id: 'identifier', ds: { kind: 'time', frequency: '1h' }, y: { kind: 'target', aggregate: 'sum' } },
  },
  prediction_length: '48h',
  quantiles: [0.1, 0.5, 0.9],
};

/** The multipart body streamed from disk, so the client holds no copy of the file. */
function multipartStream(file: string): { body: Readable; contentType: string } {
  const boundary = `----bench-${Date.now()}`;
  async function* parts() {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="query"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(query)}\r\n`);
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="m4"; filename="m4-hourly.parquet"\r\nContent-Type: application/vnd.apache.parquet\r\n\r\n`,
    );
    yield* fs.createReadStream(file);
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return { body: Readable.from(parts()), contentType: `multipart/form-data; boundary=${boundary}` };
}

interface Sample {
  at: number;
  rss: number;
}

interface RunResult {
  model: string;
  status: number;
  wallMs: number;
  timing: Record<string, number>;
  /** Peak RSS above idle while the upload is parsed and the schema logic runs. */
  schemaPeakBytes: number;
  /** Peak RSS above idle over the whole request (model fitting included). */
  peakBytes: number;
  smape: number | null;
  series: number;
}

async function post(baseUrl: string, file: string, model: string, series: M4Series[], replicate = 1): Promise<RunResult> {
  const idle = process.memoryUsage.rss();
  const samples: Sample[] = [];
  const sampler = setInterval(() => samples.push({ at: performance.now(), rss: process.memoryUsage.rss() }), 5);
  const { body, contentType } = multipartStream(file);
  const started = performance.now();
  const res = await fetch(`${baseUrl}/v1-beta/forecast?model=${model}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': contentType },
    body: Readable.toWeb(body) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  const wallMs = performance.now() - started;
  clearInterval(sampler);
  const timing = Object.fromEntries(
    (res.headers.get('server-timing') ?? '').split(',').map((entry) => {
      const [name, dur] = entry.trim().split(';dur=');
      return [name, Number(dur)];
    }),
  );
  const schemaEnd = started + (timing.upload ?? 0) + (timing.schema ?? 0);
  const peak = (until: number) => Math.max(0, ...samples.filter((s) => s.at <= until).map((s) => s.rss - idle));
  let score: number | null = null;
  let answered = 0;
  if (res.ok) {
    const { data } = JSON.parse(text) as { data: { identifiers: { unique_id: string[] }; targets: { y: { quantiles: { mean: number[] } } } } };
    const byId = new Map<string, number[]>();
    data.identifiers.unique_id.forEach((id, i) => byId.set(id, [...(byId.get(id) ?? []), data.targets.y.quantiles.mean[i]]));
    answered = byId.size;
    const ids = series.map((s) => (replicate > 1 ? `${s.id}_0` : s.id));
    const scores = series.map((s, i) => smape(s.test, Float64Array.from(byId.get(ids[i]) ?? [])));
    score = scores.reduce((a, b) => a + b, 0) / scores.length;
  } else {
    console.error(`${model}: HTTP ${res.status} ${text.slice(0, 500)}`);
  }
  return { model, status: res.status, wallMs, timing, schemaPeakBytes: peak(schemaEnd), peakBytes: peak(Infinity), smape: score, series: answered };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const ms = (x: number | undefined) => (x === undefined ? '-' : `${(x / 1000).toFixed(2)} s`);

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      models: { type: 'string', default: 'aets' },
      limit: { type: 'string' },
      replicate: { type: 'string', default: '1' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (!values) return;
  if (values.help) return console.log(USAGE);
  const models = values.models
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  const limit = values.limit === undefined ? Infinity : Number(values.limit);
  const replicate = Number(values.replicate);
  if (!(limit >= 1) || !Number.isInteger(replicate) || replicate < 1) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }

  const all = await loadM4('hourly');
  const series = all.slice(0, limit);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-beta-'));
  const written = await writeM4Parquet(series, path.join(dir, 'm4-hourly.parquet'), replicate);
  const warmup = await writeM4Parquet(series.slice(0, 4), path.join(dir, 'warmup.parquet'));

  const config = loadConfig({ ...process.env, FORECAST_API_KEYS: `bench:${KEY}`, DATA_DIR: path.join(dir, 'data'), RATE_LIMIT_PER_SECOND: '0' });
  const app = await buildServer(config);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const results: RunResult[] = [];
  try {
    for (const model of models) {
      // A small upload first, so module loading and worker start-up are not counted.
      await post(address, warmup.file, model, series.slice(0, 4));
      results.push(await post(address, written.file, model, series, replicate));
    }
  } finally {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }

  console.log(
    `M4 Hourly${replicate > 1 ? ` x${replicate}` : ''}, ${series.length * replicate} series, ${written.rows} rows: Parquet ${mb(written.fileBytes)} on disk, ${mb(written.decodedBytes)} decoded; ${config.engine.modelThreads} model threads, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'})`,
  );
  console.log('model            wall    upload  schema  model   assemble  parse+schema share  schema peak RSS (x decoded)  request peak RSS  sMAPE');
  for (const r of results) {
    const schemaShare = ((r.timing.upload ?? 0) + (r.timing.schema ?? 0) + (r.timing.assemble ?? 0)) / r.wallMs;
    console.log(
      [
        r.model.padEnd(14),
        ms(r.wallMs).padStart(8),
        ms(r.timing.upload).padStart(8),
        ms(r.timing.schema).padStart(7),
        ms(r.timing.model).padStart(8),
        ms(r.timing.assemble).padStart(8),
        `${(100 * schemaShare).toFixed(1)}%`.padStart(12),
        `${mb(r.schemaPeakBytes)} (${(r.schemaPeakBytes / written.decodedBytes).toFixed(2)}x)`.padStart(26),
        mb(r.peakBytes).padStart(18),
        (r.smape === null ? '-' : r.smape.toFixed(2)).padStart(8),
        r.status === 200 && r.series === series.length * replicate ? '' : `  (HTTP ${r.status}, ${r.series}/${series.length * replicate} series answered)`,
      ].join('  '),
    );
  }
  if (values.json)
    fs.writeFileSync(
      values.json,
      JSON.stringify(
        { series: series.length * replicate, rows: written.rows, fileBytes: written.fileBytes, decodedBytes: written.decodedBytes, results },
        null,
        2,
      ),
    );
}
