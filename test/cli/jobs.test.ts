import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AUTH, KEY, testConfig } from '../api/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../jobs/temporal-env.ts';
import { dailySales, FlakyProxy, FORECAST_BIN, query, runForecast, startForecast, tempDir, writeCsv, writeParquet } from './helpers.ts';

/**
 * The `forecast` CLI against a real service (API, Temporal dev server, worker), run as its users
 * run it: a child process reading files and writing Parquet results.
 */

let stack: JobsStack;
let url: string;
let dir: string;
// A body limit low enough to reach with a small file; the CLI's own check assumes the default.
const config = testConfig({ maxBodyBytes: 256 * 1024 });

beforeAll(async () => {
  stack = await startJobsStack(config, 'cli-test', 4);
  await stack.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
  dir = tempDir();
}, 120_000);

afterAll(() => stack?.stop());

const env = (key = KEY) => ({ FORECAST_URL: url, FORECAST_API_KEY: key, DATA_DIR: config.dataDir });
const forecast = (args: string[], key?: string) => runForecast(args, env(key), dir);

const STORES = ['store_berlin', 'store_hamburg', 'store_munich', 'store_cologne', 'store_essen', 'store_bonn'];

/** Means by unique_id from POST /forecast for the same series, to compare the job's results with. */
async function synchronousMeans(rows: { unique_id: string; ds: string; y: number }[], extra: Record<string, unknown>) {
  const ids = [...new Set(rows.map((r) => r.unique_id))].sort();
  const series = ids.map((id) => {
    const own = rows.filter((r) => r.unique_id === id);
    return { target: own.map((r) => r.y), index: own.map((r) => r.ds), ...(extra.fcds ? { fcds: extra.fcds } : {}) };
  });
  const res = await stack.app.inject({
    method: 'POST',
    url: '/forecast?model=aets',
    headers: AUTH,
    payload: { series, horizon: 7, freq: 'D', ...extra, fcds: undefined },
  });
  expect(res.statusCode).toBe(200);
  return new Map(ids.map((id, i) => [id, (res.json().series[i] as { prediction: { mean: number[] } }[]).flatMap((p) => p.prediction.mean)]));
}

describe('forecast submit', () => {
  test('a CSV backtest: reads the long format, shows progress, downloads Parquet results named by unique_id', async () => {
    const rows = dailySales(STORES, 70);
    // Rows in no particular order, and a column the CLI does not send.
    const shuffled = rows
      .map((r, i) => ({ ...r, promo: i % 5 === 0 ? 1 : 0 }))
      .sort((a, b) => a.ds.localeCompare(b.ds) || b.unique_id.localeCompare(a.unique_id));
    const file = writeCsv(path.join(dir, 'sales.csv'), ['ds', 'unique_id', 'promo', 'y'], shuffled);
    const fcds = '2024-02-10,2024-02-17,2024-02-24,2024-03-02';
    const run = await forecast([
      'submit',
      file,
      '--model',
      'aets',
      '--horizon',
      '7',
      '--freq',
      'D',
      '--fcds',
      fcds,
      '--quantiles',
      '0.1,0.9',
      '--interval',
      '0.2',
      '--out',
      'backtest',
    ]);
    expect(run.stderr).toContain(`read ${file}: 6 series, 420 rows; ignored column(s) promo (only unique_id, ds, y are sent)`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/submitted job [\w-]+: 24 forecasts of 6 series with aets/);
    // Not a terminal: plain progress lines, then the end.
    expect(run.stderr).toMatch(/progress: \d+\/24 forecasts \(\d+%\)/);
    expect(run.stderr).toMatch(/progress: done in \d+ s/);
    expect(run.stdout).toBe('wrote backtest/predictions.parquet\nwrote backtest/metrics.parquet\n');

    const predictions = path.join(dir, 'backtest/predictions.parquet');
    const columns = await query(`SELECT column_name FROM (DESCRIBE SELECT * FROM '${predictions}')`);
    expect(columns.map((c) => c.column_name).slice(0, 3)).toEqual(['unique_id', 'job_id', 'model']);
    const perSeries = await query(
      `SELECT unique_id, count(*)::INTEGER AS n, min(fcd_timestamp)::DATE::VARCHAR AS first_fcd FROM '${predictions}' GROUP BY ALL ORDER BY ALL`,
    );
    // Each store: 4 creation dates (the last observation each forecast saw) x 7 steps.
    expect(perSeries).toEqual([...STORES].sort().map((id) => ({ unique_id: id, n: 28, first_fcd: '2024-02-10' })));
    // The same numbers POST /forecast gives for each store's own series: the ids are where they belong.
    const expected = await synchronousMeans(rows, { fcds: [41, 48, 55, 62], quantiles: [0.1, 0.9] });
    for (const id of STORES) {
      const means = await query(`SELECT mean FROM '${predictions}' WHERE unique_id = '${id}' ORDER BY fcd_index, step`);
      expect(means.map((m) => m.mean)).toEqual(expected.get(id));
    }
    const scored = await query(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT unique_id)::INTEGER AS ids FROM '${path.join(dir, 'backtest/metrics.parquet')}' WHERE known_steps = 7`,
    );
    expect(scored).toEqual([{ n: 24, ids: 6 }]);
  }, 180_000);

  test('a Parquet file with --no-wait; then status --wait, download with and without --input, jobs', async () => {
    const rows = dailySales(STORES.slice(0, 3), 50);
    const file = await writeParquet(path.join(dir, 'sales.parquet'), rows);
    const submitted = await forecast(['submit', file, '--model', 'aets', '--horizon', '7', '--freq', 'D', '--no-wait']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const jobId = submitted.stdout.trim();
    expect(jobId).toMatch(/^[\w-]+$/);
    expect(submitted.stderr).toContain(`forecast download ${jobId} --input ${file}`);

    const waited = await forecast(['status', jobId, '--wait', '--interval', '0.2']);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain(`job ${jobId}: completed\n  3 series; results: forecast download ${jobId}`);

    const named = await forecast(['download', jobId, '--input', file, '--out', 'named']);
    expect(named.code, named.stderr).toBe(0);
    // A forecast from the end has nothing to be scored against: no metrics file, and the reason.
    expect(named.stdout).toBe('wrote named/predictions.parquet\n');
    expect(named.stderr).toContain('no metrics.parquet: no forecast had actual values');
    const firstSteps = await query(
      `SELECT unique_id, "timestamp"::DATE::VARCHAR AS day, timestamp_text FROM '${dir}/named/predictions.parquet' WHERE step = 1 ORDER BY unique_id`,
    );
    // ds was a DATE column: sent as dates, so the forecast index is dates; it starts the day after the last observation.
    expect(firstSteps).toEqual([...STORES.slice(0, 3)].sort().map((id) => ({ unique_id: id, day: '2024-02-20', timestamp_text: '2024-02-20' })));
    const expected = await synchronousMeans(rows, {});
    const means = await query(`SELECT unique_id, list(mean ORDER BY step) AS mean FROM '${dir}/named/predictions.parquet' GROUP BY ALL`);
    for (const row of means) expect(row.mean).toEqual(expected.get(String(row.unique_id)));

    // An --out that is a file: one line saying so, and the results stay on the service.
    fs.writeFileSync(path.join(dir, 'a-file'), '');
    const onFile = await forecast(['download', jobId, '--out', 'a-file/sub']);
    expect(onFile.code).toBe(1);
    expect(onFile.stderr).toMatch(
      /^error: job \S+ completed, but its results could not be downloaded: cannot write the results to the folder a-file\/sub: ENOTDIR/,
    );
    expect(onFile.stderr).toContain('the results stay on the service');
    expect(onFile.stderr).not.toMatch(/\n\s+at /);

    const plain = await forecast(['download', jobId]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(`wrote ${jobId}/predictions.parquet\n`);
    expect(plain.stderr).toContain('rows name their series by series_index');
    expect(await query(`SELECT count(*)::INTEGER AS n, max(series_index) AS last FROM '${dir}/${jobId}/predictions.parquet'`)).toEqual([{ n: 21, last: 2 }]);

    const listed = await forecast(['jobs']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^JOB ID\s+KIND\s+MODEL\s+CREATED\s+SERIES\s+FORECASTS\s+STATUS$/);
    expect(listed.stdout).toMatch(new RegExp(`${jobId}\\s+forecast\\s+aets\\s+\\S+\\s+3\\s+3\\s+completed`));
    const json = JSON.parse((await forecast(['jobs', '--json'])).stdout) as { job_id: string }[];
    expect(json.map((j) => j.job_id)).toContain(jobId);

    const status = await forecast(['status', jobId, '--json']);
    expect(JSON.parse(status.stdout)).toEqual({ job_id: jobId, status: 'completed', total_series: 3 });
  }, 180_000);

  test('in a terminal, a progress bar with forecasts done, rate and time left', async () => {
    const file = writeCsv(path.join(dir, 'tty.csv'), ['unique_id', 'ds', 'y'], dailySales(STORES, 70));
    const command = [FORECAST_BIN, 'submit', file, '--horizon', '7', '--freq', 'D', '--fcds', '40,45,50,55,60,65', '--interval', '0.2', '--out', 'tty'];
    // `script` gives the CLI a pseudo-terminal, as a person's shell would.
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        'script',
        ['-qec', command.map((a) => `'${a}'`).join(' '), '/dev/null'],
        { cwd: dir, env: { ...process.env, ...env() }, timeout: 120_000 },
        (error, stdout) => (error ? reject(new Error(`${error.message}\n${stdout}`)) : resolve(stdout)),
      ),
    );
    expect(output).toMatch(/[█░]{30} \d+% \| \d+\/36 forecasts \| [\d.-]+ forecasts\/s \| (about .+ left|time left unknown)/);
    expect(output).toMatch(/█{30} 100% \| 36\/36 forecasts \| [\d.-]+ forecasts\/s \| done/);
    expect(output).toContain('wrote tty/predictions.parquet');
  }, 180_000);
});

test('a submission whose connection drops is sent again with its Idempotency-Key (one job), and a wait outlives a restart of the service', async () => {
  const proxy = new FlakyProxy((stack.app.server.address() as AddressInfo).port);
  await proxy.start();
  proxy.dropNextSubmission = true;
  const outage = proxy.goDownAtNextPoll();
  const jobsNow = async () => (await stack.app.inject({ method: 'GET', url: '/forecast-jobs?limit=1000', headers: AUTH })).json().jobs.length as number;
  const before = await jobsNow();
  const file = writeCsv(path.join(dir, 'flaky.csv'), ['unique_id', 'ds', 'y'], dailySales(STORES, 70));
  const cli = startForecast(
    ['submit', file, '--model', 'ensemble', '--horizon', '7', '--freq', 'D', '--fcds', '40,50,60', '--interval', '0.2', '--out', 'flaky'],
    { ...env(), FORECAST_URL: proxy.url },
    dir,
  );
  // At the CLI's first poll of the job, the service goes away for a few seconds and comes back on the same address.
  await Promise.race([outage, cli.exited.then(() => Promise.reject(new Error(`the CLI ended before its first poll:\n${cli.output().stderr}`)))]);
  expect(cli.output().stderr).toContain('submitted job');
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  await proxy.start();
  expect(await cli.exited, cli.output().stderr).toBe(0);
  expect(cli.output().stderr).toMatch(
    /lost contact with the service \(cannot reach the forecasting service at http:\/\/127\.0\.0\.1:\d+: connection refused\); trying again for up to 5 min\n/,
  );
  // The first answer never reached the CLI; its second try, with the same key, got the same job.
  expect(proxy.dropped).toBe(1);
  expect(await jobsNow()).toBe(before + 1);
  expect(await query(`SELECT count(*)::INTEGER AS n FROM '${dir}/flaky/predictions.parquet'`)).toEqual([{ n: 6 * 3 * 7 }]);
  await proxy.stop();
}, 180_000);

describe('what the service refuses, as the CLI prints it', () => {
  test('a 422 is printed as title, detail and each field path, explained by unique_id', async () => {
    const rows = dailySales(['long_store', 'short_store'], 60).filter((r) => r.unique_id === 'long_store' || r.ds < '2024-01-31');
    const file = writeCsv(path.join(dir, 'short.csv'), ['unique_id', 'ds', 'y'], rows);
    const run = await forecast(['submit', file, '--horizon', '7', '--freq', 'D', '--fcds', '40,50']);
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toContain('error: Unprocessable Content (422 invalid_request)');
    expect(lines).toContain('  the request body failed validation (2 fields)');
    expect(lines).toContain(
      "  body.series[1].fcds[0] (series 'short_store' (30 observations), forecast creation date 40): forecast creation date 40 is past the end of the target (30 observations)",
    );
    expect(lines).toContain(
      "  body.series[1].fcds[1] (series 'short_store' (30 observations), forecast creation date 50): forecast creation date 50 is past the end of the target (30 observations)",
    );

    const model = await forecast(['submit', file, '--horizon', '7', '--freq', 'D', '--model', 'prophet']);
    expect(model.code).toBe(1);
    expect(model.stderr).toMatch(/error: Unprocessable Content \(422 \w+\)\n(  .+\n)*  query\.model: /);
  }, 60_000);

  test('a wrong key is a 401 with what to check; an unknown job a 404', async () => {
    const run = await forecast(['jobs'], 'not-a-key');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'error: Unauthorized (401 invalid_auth)\n  the API key is not valid\n' +
        '  check the key: --api-key or FORECAST_API_KEY (a key is made with `forecast keys create <principal>` where the service keeps its DATA_DIR)\n',
    );
    const unknown = await forecast(['status', 'no-such-job']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("error: Not Found (404 not_found)\n  no job 'no-such-job'\n");
    // Flags override the environment.
    const flagged = await runForecast(['--api-key', KEY, '--url', url, 'jobs'], { FORECAST_URL: 'http://127.0.0.1:1', FORECAST_API_KEY: 'wrong' }, dir);
    expect(flagged.code, flagged.stderr).toBe(0);
  }, 60_000);

  test('a body over the server limit is a 413 the CLI explains', async () => {
    const file = writeCsv(path.join(dir, 'wide.csv'), ['unique_id', 'ds', 'y'], dailySales(STORES, 4000));
    const run = await forecast(['submit', file, '--horizon', '7', '--freq', 'D']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error: the request built from .*wide\.csv is \d+\.\d KiB, over the server's limit \(413\)/);
    expect(run.stderr).toContain('split the file by unique_id');
  }, 60_000);

  test('a running job: download is refused; cancelled, the waiting submit and status say it failed (exit 1)', async () => {
    const file = writeCsv(path.join(dir, 'slow.csv'), ['unique_id', 'ds', 'y'], dailySales(STORES, 120));
    const fcds = Array.from({ length: 30 }, (_, i) => 60 + 2 * i).join(',');
    const waiting = startForecast(['submit', file, '--model', 'ensemble', '--horizon', '7', '--freq', 'D', '--fcds', fcds, '--interval', '0.2'], env(), dir);
    const submitted = await until(async () => /submitted job ([\w-]+)/.exec(waiting.output().stderr) ?? undefined, 60_000, 'the submission');
    const jobId = submitted[1];
    const early = await forecast(['download', jobId]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`job ${jobId} is still in_progress`);
    const cancelled = await forecast(['cancel', jobId]);
    expect(cancelled.stdout).toBe(`cancelling job ${jobId}\n`);
    expect(await waiting.exited).toBe(1);
    expect(waiting.output().stderr).toContain(`error: job ${jobId} failed (cancelled): the job was cancelled`);
    const status = await forecast(['status', jobId]);
    expect(status.code).toBe(1);
    expect(status.stdout).toBe(`job ${jobId}: failed (cancelled)\n  the job was cancelled\n`);
    const again = await forecast(['cancel', jobId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error: Conflict (409 job_finished)');
  }, 120_000);
});

test('forecast keys create, list and revoke: the service accepts the key, then refuses it', async () => {
  const created = await forecast(['keys', 'create', 'carol']);
  expect(created.code, created.stderr).toBe(0);
  const key = created.stdout.trim().split('\n').pop()!;
  expect(key).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/);
  expect((await forecast(['jobs'], key)).stdout).toBe('no jobs\n');

  const listed = await forecast(['keys', 'list']);
  const line = listed.stdout.split('\n').find((l) => l.includes('carol'))!;
  expect(line).toContain(`${key.slice(0, 10)}...`);
  expect(line).toMatch(/\tactive$/);
  expect(listed.stdout).not.toContain(key);

  const revoked = await forecast(['keys', 'revoke', key.slice(0, 10)]);
  expect(revoked.stdout).toBe('revoked 1 key(s)\n');
  // The service re-reads its keys every few seconds: the key stops working within 5 s.
  await until(async () => (await forecast(['jobs'], key)).code === 1, 15_000, 'the revoked key to be refused');
  expect((await forecast(['jobs'], key)).stderr).toContain('401 invalid_auth');
  const none = await forecast(['keys', 'revoke', 'fsk_nothing']);
  expect(none.code).toBe(1);
  expect(none.stdout).toBe("no active key matches 'fsk_nothing'\n");
  // --data-dir names another service's keys.
  expect((await forecast(['keys', 'list', '--data-dir', tempDir()])).stdout).toBe('no keys\n');
}, 120_000);

test('the CLI left no partial downloads behind', () => {
  const leftovers = fs.readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.partial') || String(f).endsWith('.rewrite'));
  expect(leftovers).toEqual([]);
});
