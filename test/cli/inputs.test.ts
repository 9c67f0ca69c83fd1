import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { dailySales, query, runForecast, tempDir, writeCsv, writeParquet } from './helpers.ts';

/**
 * What the CLI refuses before anything reaches a service (exit 2, one clear message naming the
 * file, row and column), and a service that is not there (exit 1).
 */

let dir: string;
let downUrl: string;

/** A port nothing listens on: bound, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  dir = tempDir();
  downUrl = `http://127.0.0.1:${await closedPort()}`;
});

const env = () => ({ FORECAST_URL: downUrl, FORECAST_API_KEY: 'any-key' });
const submit = (file: string, ...more: string[]) => runForecast(['submit', file, '--horizon', '7', '--freq', 'D', ...more], env());

describe('a long-format file the CLI cannot send', () => {
  test('a missing column is named, with the columns the file has', async () => {
    const file = writeCsv(path.join(dir, 'no-y.csv'), ['unique_id', 'ds', 'sales'], [{ unique_id: 'a', ds: '2024-01-01', sales: 3 }]);
    const run = await submit(file);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: ${file} has no column 'y'`);
    expect(run.stderr).toContain('its columns: unique_id, ds, sales');
    expect(run.stderr).toContain('--target-col');
  });

  test('an unparsable value names its row and column', async () => {
    const rows: Record<string, unknown>[] = dailySales(['store_1'], 5);
    rows[2].y = 'n/a';
    const file = writeCsv(path.join(dir, 'bad-value.csv'), ['unique_id', 'ds', 'y'], rows);
    const run = await submit(file);
    expect(run.code).toBe(2);
    // Rows are counted from 0, as pandas counts them: the third row is row 2.
    expect(run.stderr).toContain(`error: ${file} row 2: y 'n/a' is not a number`);
    // A decimal comma makes a fourth field: the CSV parser's own message, with its line.
    // Past a double's range: not sent as null.
    rows[2].y = '1e400';
    const huge = await submit(writeCsv(path.join(dir, 'huge-value.csv'), ['unique_id', 'ds', 'y'], rows));
    expect(huge.code).toBe(2);
    expect(huge.stderr).toContain("row 2: y '1e400' is beyond the range of a number the service takes");
    rows[2].y = '12,5';
    const ragged = await submit(writeCsv(path.join(dir, 'decimal-comma.csv'), ['unique_id', 'ds', 'y'], rows));
    expect(ragged.code).toBe(2);
    expect(ragged.stderr).toMatch(/decimal-comma\.csv is not a readable CSV file: .*line 4/);
  });

  test('an invalid date, an empty value and a repeated timestamp are refused with their rows', async () => {
    const rows: Record<string, unknown>[] = dailySales(['store_1'], 5);
    const cases: [string, (r: Record<string, unknown>[]) => void, string][] = [
      ['bad-date.csv', (r) => (r[1].ds = '2024-02-30'), `row 1: ds '2024-02-30' is not a date (YYYY-MM-DD) or an ISO 8601 date-time`],
      ['empty-y.csv', (r) => (r[3].y = ''), 'row 3: y is empty; the service needs a value at every timestamp'],
      ['repeated.csv', (r) => (r[4].ds = r[0].ds), "series 'store_1' has two rows at 2024-01-01 (rows 0 and 4)"],
    ];
    for (const [name, spoil, message] of cases) {
      const copy = rows.map((r) => ({ ...r }));
      spoil(copy);
      const run = await submit(writeCsv(path.join(dir, name), ['unique_id', 'ds', 'y'], copy));
      expect(run.code, name).toBe(2);
      expect(run.stderr, name).toContain(message);
    }
  }, 60_000);

  test('a Parquet file with a missing value or a column of the wrong type says which', async () => {
    const file = await writeParquet(path.join(dir, 'nulls.parquet'), dailySales(['store_1'], 5));
    const withNull = path.join(dir, 'with-null.parquet');
    await query(`COPY (SELECT unique_id, ds, CASE WHEN ds = DATE '2024-01-03' THEN NULL ELSE y END AS y FROM '${file}') TO '${withNull}' (FORMAT parquet)`);
    const nullRun = await submit(withNull);
    expect(nullRun.code).toBe(2);
    expect(nullRun.stderr).toContain(`${withNull} row 2: y is empty`);

    const booleans = path.join(dir, 'booleans.parquet');
    await query(`COPY (SELECT unique_id, ds, y > 100 AS y FROM '${file}') TO '${booleans}' (FORMAT parquet)`);
    const typeRun = await submit(booleans);
    expect(typeRun.code).toBe(2);
    expect(typeRun.stderr).toContain(`${booleans}: column y is BOOLEAN; expected numbers`);
  }, 60_000);

  test('a file of another format, or none at all, is refused', async () => {
    const other = await submit(writeCsv(path.join(dir, 'data.txt'), ['unique_id', 'ds', 'y'], dailySales(['a'], 3)));
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('unknown format; expected a .csv, .csv.gz or .parquet file');
    const missing = await submit(path.join(dir, 'nowhere.csv'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file');
  });

  test('a file too large for one request is stopped while it is read, before anything is sent', async () => {
    const file = writeCsv(path.join(dir, 'large.csv'), ['unique_id', 'ds', 'y'], dailySales(['a', 'b', 'c'], 400));
    const run = await submit(file, '--max-body-bytes', '4096');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is too large for one request: its first \d+ rows already make a body over 4\.0 KiB/);
    expect(run.stderr).toContain('split the file by unique_id');
  });
});

describe('the command line', () => {
  test('a missing option, a frequency the service does not know and a bad quantile are usage errors (exit 2)', async () => {
    const file = writeCsv(path.join(dir, 'ok.csv'), ['unique_id', 'ds', 'y'], dailySales(['a'], 10));
    const noHorizon = await runForecast(['submit', file, '--freq', 'D'], env());
    expect(noHorizon.code).toBe(2);
    expect(noHorizon.stderr).toContain("required option '--horizon <steps>' not specified");
    const badFreq = await runForecast(['submit', file, '--horizon', '3', '--freq', 'daily'], env());
    expect(badFreq.code).toBe(2);
    expect(badFreq.stderr).toContain("argument 'daily' is invalid. Allowed choices are 10S, min");
    const badQuantile = await submit(file, '--quantiles', '0.1,1.5');
    expect(badQuantile.code).toBe(2);
    expect(badQuantile.stderr).toContain("'1.5' is not a level between 0 and 1");
  });

  test('--fcds takes history lengths or timestamps; a series that starts after every timestamp is named', async () => {
    const rows = [...dailySales(['early'], 30), ...dailySales(['late'], 10, Date.UTC(2024, 1, 1))];
    const file = writeCsv(path.join(dir, 'late.csv'), ['unique_id', 'ds', 'y'], rows);
    const garbled = await submit(file, '--fcds', '20,next-week');
    expect(garbled.code).toBe(2);
    expect(garbled.stderr).toContain("--fcds: 'next-week' is neither a history length (a whole number) nor a date or ISO 8601 date-time");
    const tooEarly = await submit(file, '--fcds', '2024-01-20,2024-01-25');
    expect(tooEarly.code).toBe(2);
    expect(tooEarly.stderr).toContain("series 'late' starts at 2024-02-01, after every --fcds timestamp: no forecast of it could see any history");
  });

  test('without a key it says how to give one', async () => {
    const run = await runForecast(['jobs'], { FORECAST_URL: downUrl });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe('error: no API key: pass --api-key or set FORECAST_API_KEY');
  });
});

test('a service that is not running is one clear message and exit 1', async () => {
  const file = writeCsv(path.join(dir, 'fine.csv'), ['unique_id', 'ds', 'y'], dailySales(['a', 'b'], 30));
  const run = await submit(file);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`error: cannot reach the forecasting service at ${downUrl}: connection refused`);
  expect(run.stderr).toContain('--url or FORECAST_URL');
  const jobs = await runForecast(['jobs'], env());
  expect(jobs.code).toBe(1);
  expect(jobs.stderr).toContain('connection refused');
});

test('a URL that names another web server, and a bad PORT, are one clear message, never a stack trace', async () => {
  // A server answering 200 with a page, then with an empty JSON object, to everything.
  let body = '<html><body>hello</body></html>';
  const other = http.createServer((_request, response) =>
    response.writeHead(200, { 'content-type': body.startsWith('<') ? 'text/html' : 'application/json' }).end(body),
  );
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(other.address() as net.AddressInfo).port}`;
  try {
    const file = writeCsv(path.join(dir, 'fine-elsewhere.csv'), ['unique_id', 'ds', 'y'], dailySales(['a'], 30));
    for (const args of [['submit', file, '--horizon', '7', '--freq', 'D'], ['status', 'some-job'], ['jobs']]) {
      const run = await runForecast(args, { FORECAST_URL: url, FORECAST_API_KEY: 'any-key' });
      expect(run.code, args[0]).toBe(1);
      expect(run.stderr, args[0]).toMatch(
        new RegExp(
          `(^|\n)error: ${url} answered .* with an answer that is no JSON object \\(text/html\\): is --url \\(or FORECAST_URL\\) the forecasting service\\?`,
        ),
      );
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    body = '{}';
    const empty = await runForecast(['submit', file, '--horizon', '7', '--freq', 'D'], { FORECAST_URL: url, FORECAST_API_KEY: 'any-key' });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain(`${url} answered the submission with no job_id`);
  } finally {
    other.close();
  }
  const port = await runForecast(['jobs'], { PORT: 'abc', FORECAST_API_KEY: 'any-key' });
  expect(port.code).toBe(2);
  expect(port.stderr.trim()).toBe("error: PORT must be a whole number >= 0; got 'abc'");
});
