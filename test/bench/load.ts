/**
 * Load benchmark: the service under many clients at once, on loopback, bounded in time.
 *
 *   npm run bench -- load [--duration 60] [--connections 64] [--job-series 2000] [--job-fcds 5]
 *                         [--throughput-duration 10] [--warmup 3] [--rounds 2] [--threads N]
 *                         [--profile DIR] [--skip-mixed] [--skip-throughput]
 *
 * The service runs as `npm start` runs it (bin/server.ts, request logging and in-process job
 * worker included) on a Temporal dev server of its own; its rate limit and concurrent-jobs quota
 * are lifted (processes.ts, LIMIT_SETTINGS), as one benchmark key sends all the traffic.
 *
 * Mixed phase: a large `aets` job is submitted first and keeps the worker busy; then `connections`
 * clients at once for `duration` seconds: most send small synchronous forecasts back to back, an
 * eighth submit small jobs and poll them, an eighth poll the large job. Prints per kind the
 * requests, status codes (any 5xx or failed request: FAIL) and latency, and the p99 latency of
 * the small synchronous forecasts against the target (under 250 ms).
 *
 * Throughput phase (the large job cancelled, the service idle again): a plain Fastify
 * hello-world, the same Fastify answering the forecast's request body with the service's answer
 * and doing nothing else (the floor: HTTP and JSON alone), and `POST /forecast?model=naive` with
 * one small series, each under the same autocannon settings after the same warm-up, `rounds`
 * times in rotating order; prints each in requests/s with its server's CPU per request, and the
 * forecast's throughput as a share of the hello-world's against the target (35% or more).
 *
 * `--profile DIR`: the service writes a V8 CPU profile (node --cpu-prof) to DIR when it stops.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Result } from 'autocannon';
import { benchOptions } from './options.ts';
import { fiveHundreds, loadAverage, mixedPhase, processCpuSeconds, statusHistogram, throughput, type Throughput } from './load/phases.ts';
import { BENCH_KEY, LIMIT_SETTINGS, startHelloWorld, startService, type Service } from './load/processes.ts';
import { largeJob, SMALL_FORECAST } from './load/requests.ts';

const USAGE =
  'usage: npm run bench -- load [--duration 60] [--connections 64] [--job-series 2000] [--job-fcds 5] [--throughput-duration 10] [--warmup 3] [--rounds 2] [--threads N] [--profile DIR] [--skip-mixed] [--skip-throughput]';
const P99_TARGET_MS = 250;
const RATIO_TARGET = 0.35;
const AUTH = { authorization: `Bearer ${BENCH_KEY}` };
const JSON_POST = { ...AUTH, 'content-type': 'application/json' };

const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
const failures: string[] = [];
function check(pass: boolean, line: string): void {
  console.log(`${verdict(pass)} ${line}`);
  if (!pass) failures.push(line);
}

async function api<T>(service: Service, method: string, route: string, body?: string): Promise<T> {
  const res = await fetch(`${service.url}${route}`, { method, headers: body ? JSON_POST : AUTH, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

interface JobState {
  status: string;
  progress?: { done: number; total: number | null } | null;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const progressText = (state: JobState) => (state.progress ? `${state.progress.done} of ${state.progress.total ?? '?'} forecasts done` : state.status);

function printKind(kind: string, clients: string, result: Result): void {
  const l = result.latency;
  console.log(`  ${kind}: ${clients}`);
  console.log(
    `    ${result.latency.totalCount} answered (${(result.latency.totalCount / result.duration).toFixed(0)}/s), status codes ${statusHistogram(result)}; errors ${result.errors}, timeouts ${result.timeouts}`,
  );
  console.log(`    latency ms: p50 ${l.p50}, p90 ${l.p90}, p99 ${l.p99}, max ${l.max}`);
}

async function mixed(service: Service, o: { durationS: number; connections: number; jobSeries: number; jobFcds: number }): Promise<void> {
  const body = largeJob(o.jobSeries, o.jobFcds);
  const submitted = performance.now();
  const { job_id: largeJobId } = await api<{ job_id: string }>(service, 'POST', '/forecast-jobs?model=aets', body);
  console.log(
    `large job: ${o.jobSeries} series x ${o.jobFcds} forecast creation dates = ${o.jobSeries * o.jobFcds} aets forecasts (${(body.length / 2 ** 20).toFixed(1)} MiB), submitted in ${((performance.now() - submitted) / 1000).toFixed(1)} s`,
  );
  // The phase starts once the worker is busy with it; a few small forecasts first load the model code.
  await waitFor(
    async () => ((await api<JobState>(service, 'GET', `/forecast-jobs/${largeJobId}`)).progress?.done ?? 0) > 0 || undefined,
    'the large job to start',
    120_000,
  );
  for (let i = 0; i < 20; i++) await api(service, 'POST', '/forecast?model=naive', SMALL_FORECAST);

  const jobClients = Math.max(1, Math.round(o.connections / 8));
  console.log(`\nmixed phase: ${o.connections} clients for ${o.durationS} s; load average ${loadAverage()}`);
  const cpuBefore = processCpuSeconds(service.pid);
  const results = await mixedPhase({
    url: service.url,
    connections: o.connections,
    durationS: o.durationS,
    syncModel: 'naive',
    largeJobId,
    jobClients,
    jobRate: 1,
    pollers: jobClients,
    pollRate: 4,
  });
  const cpu = processCpuSeconds(service.pid) - cpuBefore;
  for (const { kind, clients, result } of results) printKind(kind, clients, result);
  const state = await api<JobState>(service, 'GET', `/forecast-jobs/${largeJobId}`);
  console.log(`  large job at the end: ${state.status}, ${progressText(state)}`);
  console.log(`  service CPU: ${cpu.toFixed(1)} s in ${o.durationS} s (${os.availableParallelism()} cores); load average ${loadAverage()}`);
  if (state.status !== 'in_progress') console.log(`WARN the large job finished before the phase ended: raise --job-series for a job that outlasts it`);
  for (const { kind, result } of results) {
    check(fiveHundreds(result) === 0 && result.errors === 0 && result.timeouts === 0, `${kind}: no 5xx, no failed request`);
  }
  check(results[0].result.latency.p99 < P99_TARGET_MS, `small synchronous forecasts p99 ${results[0].result.latency.p99} ms (target < ${P99_TARGET_MS} ms)`);

  await api(service, 'POST', `/forecast-jobs/${largeJobId}/cancel`);
  await waitFor(
    async () => ((await api<JobState>(service, 'GET', `/forecast-jobs/${largeJobId}`)).status === 'in_progress' ? undefined : true),
    'the large job to stop',
    120_000,
  );
  // A cancelled job's chunks in flight still finish their fits: the next phase starts on an idle service.
  await waitForIdle(service.pid);
}

/** Until the process uses under a tenth of a core over a second. */
async function waitForIdle(pid: number): Promise<void> {
  let cpu = processCpuSeconds(pid);
  await waitFor(
    async () => {
      await new Promise((r) => setTimeout(r, 1000));
      const busy = processCpuSeconds(pid) - cpu;
      cpu += busy;
      return busy < 0.1 || undefined;
    },
    'the service to go idle',
    180_000,
  );
}

type Target = 'hello' | 'floor' | 'forecast';
const TARGET_NAMES: Record<Target, string> = {
  hello: 'Fastify hello-world (GET /)',
  floor: 'Fastify, same POST body and answer, no work',
  forecast: 'service POST /forecast?model=naive, 1 series',
};

async function throughputPhase(service: Service, dir: string, o: { durationS: number; warmupS: number; connections: number; rounds: number }): Promise<void> {
  const forecastUrl = `${service.url}/forecast?model=naive`;
  const answer = await (await fetch(forecastUrl, { method: 'POST', headers: JSON_POST, body: SMALL_FORECAST })).text();
  const hello = await startHelloWorld(dir, answer);
  try {
    const post = { method: 'POST' as const, headers: JSON_POST, body: SMALL_FORECAST, expected: answer };
    const targets = {
      hello: { url: hello.url, pid: hello.pid, method: 'GET' as const, expected: await (await fetch(hello.url)).text() },
      floor: { ...post, url: `${hello.url}/forecast`, pid: hello.pid },
      forecast: { ...post, url: forecastUrl, pid: service.pid },
    };
    console.log(
      `\nthroughput phase: ${o.connections} clients back to back, ${o.warmupS} s warm-up then ${o.durationS} s each, ${o.rounds} round(s) in rotating order; load average ${loadAverage()}`,
    );
    const totals: Record<Target, number> = { hello: 0, floor: 0, forecast: 0 };
    const order: Target[] = ['hello', 'floor', 'forecast'];
    for (let round = 1; round <= o.rounds; round++) {
      const measured = {} as Record<Target, Throughput>;
      for (const which of [...order.slice((round - 1) % 3), ...order.slice(0, (round - 1) % 3)]) {
        const t = (measured[which] = await throughput(targets[which], o.connections, o.durationS, o.warmupS));
        totals[which] += t.requestsPerSecond;
        const l = t.result.latency;
        console.log(
          `  round ${round}: ${TARGET_NAMES[which]}: ${t.requestsPerSecond.toFixed(0)} req/s, p50 ${l.p50} ms, p99 ${l.p99} ms; server CPU ${(t.cpuMsPerRequest * 1000).toFixed(0)} µs/request; status codes ${statusHistogram(t.result)}; body mismatches ${t.result.mismatches}`,
        );
        check(
          fiveHundreds(t.result) === 0 && t.result.errors === 0 && t.result.mismatches === 0,
          `round ${round}: ${TARGET_NAMES[which]}: every answer 200 and as expected`,
        );
      }
      const { hello: h, floor: f, forecast: s } = measured;
      console.log(
        `  round ${round}: POST /forecast at ${pct(s.requestsPerSecond / h.requestsPerSecond)} of hello-world (the floor at ${pct(f.requestsPerSecond / h.requestsPerSecond)}); load average ${loadAverage()}`,
      );
    }
    const mean = (t: Target) => totals[t] / o.rounds;
    console.log(
      `  over ${o.rounds} round(s): hello-world ${mean('hello').toFixed(0)} req/s, floor ${mean('floor').toFixed(0)} req/s (${pct(mean('floor') / mean('hello'))}), POST /forecast ${mean('forecast').toFixed(0)} req/s (${pct(mean('forecast') / mean('floor'))} of the floor)`,
    );
    const ratio = mean('forecast') / mean('hello');
    check(ratio >= RATIO_TARGET, `POST /forecast (naive, 1 series) at ${pct(ratio)} of Fastify hello-world (target >= ${RATIO_TARGET * 100}%)`);
  } finally {
    await hello.stop();
  }
}

const pct = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      duration: { type: 'string', default: '60' },
      connections: { type: 'string', default: '64' },
      'job-series': { type: 'string', default: '2000' },
      'job-fcds': { type: 'string', default: '5' },
      'throughput-duration': { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '2' },
      threads: { type: 'string', default: String(os.availableParallelism()) },
      profile: { type: 'string' },
      'skip-mixed': { type: 'boolean', default: false },
      'skip-throughput': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (!values) return;
  if (values.help) return console.log(USAGE);
  const n = (name: keyof typeof values) => Number(values[name]);
  const counts = ['duration', 'connections', 'job-series', 'job-fcds', 'throughput-duration', 'warmup', 'rounds', 'threads'] as const;
  const bad = counts.find((name) => !Number.isInteger(n(name)) || n(name) < 1);
  // Bounded: the mixed phase at most 10 minutes, a throughput run at most 2.
  if (bad || n('duration') > 600 || n('throughput-duration') > 120 || n('warmup') > 60 || n('rounds') > 5 || n('connections') > 1024 || n('connections') < 3) {
    console.error(
      `${bad ? `--${bad} must be a whole number >= 1` : 'an option is beyond its bound (--duration <= 600, --throughput-duration <= 120, --warmup <= 60, --rounds <= 5, 3 <= --connections <= 1024)'}\n${USAGE}`,
    );
    process.exitCode = 2;
    return;
  }
  spawnSync('bash', ['scripts/ensure-temporal-cli.sh'], { stdio: 'inherit' });

  const cpus = os.cpus();
  console.log(`load: ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; loopback only`);
  console.log(
    `service: bin/server.ts with its in-process worker, ${n('threads')} model threads, request logging to a file; limits for the benchmark key: ${Object.entries(
      LIMIT_SETTINGS,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')} (rate limit off, concurrent jobs unlimited), other quotas at their defaults; load average ${loadAverage()}`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-load-'));
  const profileDir = values.profile ? path.resolve(values.profile) : undefined;
  let service: Service | undefined;
  try {
    service = await startService(dir, { modelThreads: n('threads'), profileDir });
    if (!values['skip-mixed']) {
      await mixed(service, { durationS: n('duration'), connections: n('connections'), jobSeries: n('job-series'), jobFcds: n('job-fcds') });
    }
    if (!values['skip-throughput']) {
      await throughputPhase(service, dir, { durationS: n('throughput-duration'), warmupS: n('warmup'), connections: n('connections'), rounds: n('rounds') });
    }
  } catch (error) {
    if (service) console.error(`the service's log: ${service.log} (kept)`);
    throw error;
  } finally {
    await service?.stop();
    if (profileDir) console.log(`the service's CPU profile: ${profileDir}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(failures.length === 0 ? '\nload: every check passed' : `\nload: ${failures.length} check(s) failed`);
  if (failures.length > 0) process.exitCode = 1;
}
