import fs from 'node:fs';
import os from 'node:os';
import autocannon, { type Options, type Result } from 'autocannon';
import { BENCH_KEY } from './processes.ts';
import { SMALL_FORECAST, SMALL_JOB } from './requests.ts';

/** The load benchmark's two phases, as autocannon runs against the service (and the hello-world). */

const AUTH = { authorization: `Bearer ${BENCH_KEY}` };
const JSON_POST = { ...AUTH, 'content-type': 'application/json' };
/** Seconds before autocannon counts a request as timed out (and fails the run). */
const REQUEST_TIMEOUT_S = 30;

export interface MixedSettings {
  url: string;
  connections: number;
  durationS: number;
  syncModel: string;
  largeJobId: string;
  /** Connections submitting a small job and polling it, each at `jobRate` requests/s. */
  jobClients: number;
  jobRate: number;
  /** Connections polling the large job, each at `pollRate` requests/s. */
  pollers: number;
  pollRate: number;
}

export interface KindResult {
  kind: string;
  clients: string;
  result: Result;
}

/** The one-minute-load-average and the CPU seconds (user + system) a process has used, from /proc (Linux). */
export const loadAverage = () => os.loadavg()[0].toFixed(2);

export function processCpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const run = (options: Options): Promise<Result> => Promise.resolve(autocannon({ timeout: REQUEST_TIMEOUT_S, ...options }));

/**
 * 64 clients at once for the phase's duration: most send small synchronous forecasts back to
 * back; a few submit small jobs and poll them; a few poll the large job. Each kind is its own
 * autocannon instance, so each has its own counts and latencies.
 */
export async function mixedPhase(s: MixedSettings): Promise<KindResult[]> {
  const syncClients = s.connections - s.jobClients - s.pollers;
  if (syncClients < 1) throw new Error(`--connections ${s.connections} leaves no client for synchronous forecasts`);
  // The job clients' latencies are what each request took: they wait between requests by design,
  // so autocannon's correction for a missed send rate does not apply.
  const paced = { ignoreCoordinatedOmission: true, duration: s.durationS, url: s.url };
  const runs: [string, string, Promise<Result>][] = [
    [
      `POST /forecast?model=${s.syncModel} (1 series)`,
      `${syncClients} clients, back to back`,
      run({
        url: `${s.url}/forecast?model=${s.syncModel}`,
        method: 'POST',
        headers: JSON_POST,
        body: SMALL_FORECAST,
        connections: syncClients,
        duration: s.durationS,
      }),
    ],
    [
      'POST /forecast-jobs + GET its status',
      `${s.jobClients} clients, ${s.jobRate} req/s each, alternating`,
      run({
        ...paced,
        connections: s.jobClients,
        connectionRate: s.jobRate,
        requests: [
          {
            method: 'POST',
            path: '/forecast-jobs?model=naive',
            headers: JSON_POST,
            body: SMALL_JOB,
            onResponse: (status, body, context) => {
              context.jobId = status === 200 ? (JSON.parse(body) as { job_id: string }).job_id : undefined;
            },
          },
          {
            method: 'GET',
            headers: AUTH,
            // No job to poll (its submission was refused): the connection starts over with a submission.
            setupRequest: (request, context) => (context.jobId ? { ...request, path: `/forecast-jobs/${context.jobId as string}` } : null),
          },
        ],
      }),
    ],
    [
      'GET /forecast-jobs/<large job>',
      `${s.pollers} clients, ${s.pollRate} req/s each`,
      run({ ...paced, url: `${s.url}/forecast-jobs/${s.largeJobId}`, headers: AUTH, connections: s.pollers, connectionRate: s.pollRate }),
    ],
  ];
  const results = await Promise.all(runs.map(([, , result]) => result));
  return runs.map(([kind, clients], i) => ({ kind, clients, result: results[i] }));
}

export interface Throughput {
  requestsPerSecond: number;
  result: Result;
  /** The server process's CPU milliseconds per answered request (all its threads). */
  cpuMsPerRequest: number;
}

/**
 * Requests per second of one endpoint under `connections` clients back to back, after a warm-up
 * with the same settings. Every answer must equal `expected` byte for byte (counted as mismatches).
 */
export async function throughput(
  target: { url: string; pid: number; method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; expected: string },
  connections: number,
  durationS: number,
  warmupS: number,
): Promise<Throughput> {
  const options = { url: target.url, method: target.method, headers: target.headers, body: target.body, connections, expectBody: target.expected };
  await run({ ...options, duration: warmupS });
  const cpuBefore = processCpuSeconds(target.pid);
  const result = await run({ ...options, duration: durationS });
  const cpu = processCpuSeconds(target.pid) - cpuBefore;
  const answered = result.latency.totalCount;
  return { requestsPerSecond: answered / result.duration, result, cpuMsPerRequest: (cpu * 1000) / Math.max(1, answered) };
}

/** "200: 1234, 404: 2": the status codes a run got, in order. */
export const statusHistogram = (result: Result) =>
  Object.entries(result.statusCodeStats)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([code, { count }]) => `${code}: ${count}`)
    .join(', ') || 'none';

export const fiveHundreds = (result: Result) =>
  Object.entries(result.statusCodeStats)
    .filter(([code]) => Number(code) >= 500)
    .reduce((sum, [, { count }]) => sum + count, 0);
