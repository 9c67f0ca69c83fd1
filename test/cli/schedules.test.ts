import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AUTH, KEY } from '../api/helpers.ts';
import { tempDir as betaTempDir } from '../beta/helpers.ts';
import { dailyQuery, scheduleTestConfig } from '../jobs/schedule-data.ts';
import { startJobsStack, until, type JobsStack } from '../jobs/temporal-env.ts';
import { runForecast, tempDir } from './helpers.ts';

/**
 * `forecast schedule ...` against a real service (API, Temporal dev server, worker), as a child
 * process: a schedule made from flags and a query file, listed, shown with its runs, paused,
 * resumed, triggered and deleted; and what it refuses, locally (exit 2) or from the service
 * (exit 1, each field path with the flag it came from).
 */

const root = betaTempDir('cli-schedules-root-');
let stack: JobsStack;
let url: string;
let dir: string;
let queryFile: string;
let hook: string;
// The webhook's receiver: a schedule with a webhook gets a secret, printed once.
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(204).end());
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  hook = `http://127.0.0.1:${port}/hook`;
  const config = await scheduleTestConfig(root, { SCHEDULE_WEBHOOK_HOSTS: `127.0.0.1:${port}` });
  stack = await startJobsStack(config, 'cli-schedules', 2);
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
  dir = tempDir();
  queryFile = path.join(dir, 'query.json');
  fs.writeFileSync(queryFile, JSON.stringify(dailyQuery()));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  receiver.close();
});

const forecast = (args: string[]) => runForecast(args, { FORECAST_URL: url, FORECAST_API_KEY: KEY }, dir);
const api = async (url: string) => (await stack.app.inject({ method: 'GET', url, headers: AUTH })).json();
const WEEKLY = ['--cron', '0 6 * * 1', '--time-zone', 'Europe/Berlin'];

describe('forecast schedule', () => {
  test('create, list, trigger, show, pause, resume and delete', async () => {
    const created = await forecast([
      'schedule',
      'create',
      '--model',
      'naive',
      '--query',
      'query.json',
      ...WEEKLY,
      '--webhook',
      hook,
      '--alert-metric',
      'mae',
      '--alert-above',
      '0',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const [id, secretLine, ...rest] = created.stdout.trim().split('\n');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(secretLine).toMatch(/^webhook-secret [\w-]{40,}$/);
    expect(rest).toEqual([]);
    expect(created.stderr).toMatch(new RegExp(`^created schedule ${id}: cron 0 6 \\* \\* 1 in Europe/Berlin, model naive; next run \\d{4}-\\d\\d-\\d\\dT`));
    expect(created.stderr).toContain('it is not shown again');
    expect(await api(`/v1-beta/forecast-schedules/${id}`)).toMatchObject({ model: 'naive', alert: { metric: 'mae', above: 0 }, webhook: { url: hook } });

    const listed = await forecast(['schedule', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^SCHEDULE ID\s+MODEL\s+STATE\s+NEXT RUN\s+WHEN$/);
    expect(row).toMatch(new RegExp(`^${id}\\s+naive\\s+active\\s+\\S+Z\\s+cron 0 6 \\* \\* 1 in Europe/Berlin$`));

    const triggered = await forecast(['schedule', 'trigger', id]);
    expect(triggered.code, triggered.stderr).toBe(0);
    expect(triggered.stdout).toBe(`triggered a run of schedule ${id}\n`);
    // A run reads as completed from its job a moment before its pooled metrics are recorded: wait for those.
    const run = await until(
      async () =>
        (await api(`/v1-beta/forecast-schedules/${id}/runs`)).runs.find(
          (r: { status: string; metrics: unknown[] }) => r.status === 'completed' && r.metrics.length > 0,
        ),
      90_000,
      'the triggered run and its metrics',
    );

    const shown = await forecast(['schedule', 'show', id]);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines[0]).toBe(`schedule ${id}: active`);
    expect(lines).toContain('  when       cron 0 6 * * 1 in Europe/Berlin');
    expect(lines).toContain('  alert      mae above 0');
    expect(lines).toContain(`  webhook    ${hook}`);
    expect(lines.find((l) => l.startsWith('  next runs'))).toMatch(/Z, .+Z, .+Z$/);
    expect(lines).toContain('runs: 1, newest first');
    expect(lines.at(-2)).toMatch(/^SCHEDULED\s+JOB ID\s+STATUS\s+MAE\s+ALERTED\s+ERROR$/);
    // The run's pooled MAE, as the API reports it, and the alert it crossed (any error is above 0).
    const mae = String(Number(run.metrics[0].mae.toPrecision(4)));
    expect(lines.at(-1)).toMatch(new RegExp(`^${run.scheduled_at}\\s+${run.job_id}\\s+completed\\s+${mae.replace('.', '\\.')}\\s+yes$`));
    const crps = await forecast(['schedule', 'show', id, '--metric', 'crps', '--json']);
    expect(JSON.parse(crps.stdout)).toMatchObject({ schedule: { schedule_id: id }, runs: [{ job_id: run.job_id, status: 'completed' }] });

    const paused = await forecast(['schedule', 'pause', id]);
    expect(paused.stdout).toBe(`paused schedule ${id}\n`);
    expect(await api(`/v1-beta/forecast-schedules/${id}`)).toMatchObject({ paused: true, next_runs: [] });
    expect((await forecast(['schedule', 'show', id])).stdout).toMatch(new RegExp(`^schedule ${id}: paused\n(.*\n)*  next runs  none while paused\n`));

    const resumed = await forecast(['schedule', 'resume', id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const next = (await api(`/v1-beta/forecast-schedules/${id}`)) as { paused: boolean; next_runs: string[] };
    expect(next.paused).toBe(false);
    expect(resumed.stdout).toBe(`resumed schedule ${id}; next run ${next.next_runs[0]}\n`);

    const deleted = await forecast(['schedule', 'delete', id]);
    expect(deleted.stdout).toBe(`deleted schedule ${id}; the jobs of its runs and their results stay\n`);
    const gone = await forecast(['schedule', 'show', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`error: Not Found (404 not_found)\n  no schedule '${id}'\n`);
    expect((await api(`/v1-beta/forecast-jobs/${run.job_id}`)).status).toBe('completed');
    expect((await forecast(['schedule', 'list'])).stdout).toBe('no schedules\n');
  }, 150_000);

  test('--idempotency-key: the same key twice makes one schedule, --every and --paused', async () => {
    const args = ['schedule', 'create', '--model', 'naive', '--query', queryFile, '--every', '1h', '--paused', '--idempotency-key', 'cli-schedules-once'];
    const first = await forecast(args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`paused; start it with \`forecast schedule resume ${first.stdout.trim()}\``);
    const second = await forecast(args);
    expect(second.stdout).toBe(first.stdout);
    expect((await api('/v1-beta/forecast-schedules')).schedules).toEqual([
      expect.objectContaining({ schedule_id: first.stdout.trim(), paused: true, spec: { interval: '1h', time_zone: 'UTC' } }),
    ]);
    expect((await forecast(['schedule', 'delete', first.stdout.trim()])).code).toBe(0);
  }, 60_000);
});

describe('what forecast schedule refuses', () => {
  test('a wrong command line exits 2 and sends nothing', async () => {
    const both = await forecast(['schedule', 'create', '--model', 'naive', '--query', queryFile, '--every', '1d', ...WEEKLY]);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('error: give exactly one of --cron EXPR (repeatable) and --every DURATION\n');
    const missing = await forecast(['schedule', 'create', '--model', 'naive', '--query', 'nothing.json', '--every', '1d']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('error: cannot read the query file nothing.json: no such file\n');
    const half = await forecast(['schedule', 'create', '--model', 'naive', '--query', queryFile, '--every', '1d', '--alert-metric', 'mae']);
    expect(half.code).toBe(2);
    expect((await api('/v1-beta/forecast-schedules')).schedules).toEqual([]);
  }, 60_000);

  test("the service's refusal is printed with each field path and the flag or query field it came from", async () => {
    const spec = await forecast(['schedule', 'create', '--model', 'naive', '--query', queryFile, '--every', '1mo', '--time-zone', 'Mars/Olympus']);
    expect(spec.code).toBe(1);
    const lines = spec.stderr.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['error: Unprocessable Content (422 invalid_request)', '  the request body failed validation (2 fields)']);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}body\.spec\.interval \(--every\): months, quarters and years have no fixed length/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}body\.spec\.time_zone \(--time-zone\): is not an IANA time zone/));

    const outside = path.join(dir, 'outside.json');
    fs.writeFileSync(outside, JSON.stringify(dailyQuery('../outside/*.parquet')));
    const source = await forecast(['schedule', 'create', '--model', 'naive', '--query', outside, '--every', '1d']);
    expect(source.code).toBe(1);
    expect(source.stderr).toContain(`  body.query.input.source (input.source in ${outside}): `);
  }, 60_000);
});
