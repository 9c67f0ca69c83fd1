import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ACTUAL_COLOR, bandAlpha, FORECAST_COLORS, HISTORY_COLOR, overWhite, rgb } from '../../web/src/chart/palette.ts';
import { hourlySeries, KEY, testConfig } from '../api/helpers.ts';
import { tempDir, writeParquet } from '../beta/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../jobs/temporal-env.ts';
import { chartReading, findChromium, launch, listen, screenshot, screenshotFolder } from './browser.ts';

/**
 * The dashboard as a new user meets it, in headless Chromium against the real service (Temporal
 * dev server, worker, job store): sign in, upload a CSV, see fan charts, download the forecast,
 * submit a backtest, watch it complete, find it among the jobs and open its fan charts; upload
 * Parquet; cancel a job. Screenshots are kept, and what the charts draw is read off their canvas.
 */

const chromium = findChromium();
if ('missing' in chromium) console.warn(`SKIPPED test/web/dashboard.test.ts (browser tests): ${chromium.missing}`);

/** Colours as the charts show them over white (web/src/chart/palette.ts). */
const COLORS = {
  history: rgb(HISTORY_COLOR),
  mean: rgb(FORECAST_COLORS[0]),
  band: overWhite(FORECAST_COLORS[0], bandAlpha(0)),
  actual: rgb(ACTUAL_COLOR),
  secondMean: rgb(FORECAST_COLORS[1]),
  thirdMean: rgb(FORECAST_COLORS[2]),
};

/** Two daily series with a weekly cycle, in the long format (unique_id, ds, y). */
function longCsv(): string {
  const lines = ['unique_id,ds,y'];
  for (const [name, level] of [
    ['store_a', 120],
    ['store_b', 60],
  ] as const)
    for (let t = 0; t < 70; t++) {
      const day = new Date(Date.UTC(2024, 0, 1) + t * 86_400_000).toISOString().slice(0, 10);
      {
        // A weekly cycle, a trend and irregular noise, so that the forecasts have visible bands.
        const noise = ((t * 7919 + level * 31) % 17) - 8;
        lines.push(`${name},${day},${(level + 0.4 * t + (level / 5) * Math.sin((2 * Math.PI * t) / 7) + noise).toFixed(2)}`);
      }
    }
  return `${lines.join('\n')}\n`;
}

// The reason is in the suite's name too, so that every reporter shows why it was skipped.
const suite = 'missing' in chromium ? `the dashboard in Chromium (skipped: ${chromium.missing})` : 'the dashboard in Chromium';

describe.skipIf('missing' in chromium)(suite, () => {
  let stack: JobsStack;
  let base: string;
  let browser: Browser;
  let page: Page;
  // tempDir registers its own removal, so it is called here, at the suite's level, not in a hook.
  const files = tempDir('dashboard-test-');
  let shots: string;
  let jobId: string;

  beforeAll(async () => {
    shots = screenshotFolder();
    stack = await startJobsStack(testConfig(), 'dashboard-test', 4);
    base = await listen(stack.app);
    browser = await launch((chromium as { path: string }).path);
    page = await browser.newPage();
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: files });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const api = (url: string, init: RequestInit = {}) =>
    fetch(`${base}${url}`, { ...init, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...init.headers } });
  /** Sets a field's value as typing would (Preact listens to input events). */
  const fill = (selector: string, value: string) =>
    page.$eval(
      selector,
      (el, value) => {
        (el as HTMLInputElement).value = value;
        el.dispatchEvent(new Event('input', { bubbles: true }));
      },
      value,
    );
  const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
  /** A fresh playground: a new document, since going to the same URL with another hash would keep the page's state. */
  const openPlayground = async () => {
    await page.goto('about:blank');
    await page.goto(`${base}/#/playground`);
    await page.waitForSelector('textarea[name=csv]');
  };

  test('sign-in refuses a wrong key with the reason, and keeps the right one in this tab only', async () => {
    await page.goto(base);
    await page.waitForSelector('form.sign-in');
    await page.type('input[name=api-key]', 'not-a-key');
    await page.click('form.sign-in button[type=submit]');
    await page.waitForSelector('form.sign-in .error');
    expect(await text('form.sign-in .error')).toContain('the API key is not valid');
    await screenshot(page, shots, '1-sign-in-refused');

    await fill('input[name=api-key]', KEY);
    await page.click('form.sign-in button[type=submit]');
    await page.waitForSelector('header.top nav');
    expect(await page.evaluate(() => [sessionStorage.getItem('forecast-api-key'), localStorage.length, document.cookie])).toEqual([KEY, 0, '']);
    await page.reload();
    await page.waitForSelector('section h2');
    expect(await text('section h2')).toBe('Jobs');
    // The list loads after the heading appears ('Loading…' first): wait for its empty state.
    await page.waitForFunction(() => document.querySelector('main')?.textContent?.includes('No jobs yet'));
  });

  test('the playground forecasts an uploaded CSV and draws each series as a fan chart', async () => {
    await openPlayground();
    const csv = path.join(files, 'sales.csv');
    fs.writeFileSync(csv, longCsv());
    const upload = await page.$('input[name=file]');
    await upload!.uploadFile(csv);
    await page.waitForFunction(() => (document.querySelector('textarea[name=csv]') as HTMLTextAreaElement).value.startsWith('unique_id,ds,y'));
    await fill('input[name=horizon]', '14');
    await page.click('button[name=forecast]');
    await page.waitForSelector('.result .fan-chart[data-drawn]');
    await screenshot(page, shots, '2-playground-forecast');

    const reading = await chartReading(page, COLORS);
    expect(reading.labels).toEqual(expect.arrayContaining(['history', '80% (0.1–0.9) upper', '80% (0.1–0.9) lower', 'q0.5', 'mean']));
    expect(reading.labels).not.toContain('actual');
    // History over most of the width, then the mean inside a shaded band: lines and an area.
    expect(reading.counts.history).toBeGreaterThan(300);
    expect(reading.counts.mean).toBeGreaterThan(50);
    expect(reading.counts.band).toBeGreaterThan(1000);
    expect(reading.counts.actual).toBe(0);

    expect(await text('.result h3')).toBe('store_a');
    await page.select('select[name=result-series]', '1');
    await page.waitForFunction(() => document.querySelector('.result h3')?.textContent === 'store_b');
    expect((await chartReading(page, COLORS)).counts.band).toBeGreaterThan(1000);
  });

  test('the forecast downloads as long-format CSV', async () => {
    await page.click('button[name=download-csv]');
    const file = path.join(files, 'forecast.csv');
    await until(async () => fs.existsSync(file) && fs.readFileSync(file, 'utf8').endsWith('\n'), 10_000, 'the download');
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('unique_id,created_at,ds,mean,0.1,0.5,0.9');
    expect(lines).toHaveLength(1 + 2 * 14);
    expect(lines[1]).toMatch(/^store_a,2024-03-10T00:00:00.000Z,2024-03-11T00:00:00.000Z,[\d.]+,[\d.]+,[\d.]+,[\d.]+$/);
  });

  test('a backtest submitted from the playground is watched to completion and found among the jobs', async () => {
    await fill('input[name=horizon]', '7');
    await fill('input[name=windows]', '3');
    await page.click('button[name=backtest]');
    await page.waitForFunction(() => location.hash.startsWith('#/jobs/forecast/'));
    jobId = (await page.evaluate(() => location.hash)).split('/').pop()!;
    await page.waitForSelector('.job-page[data-status=completed]', { timeout: 60_000 });
    expect(await text('.job-page .badge')).toBe('completed');

    await page.click('header.top nav a[href="#/jobs"]');
    await page.waitForSelector(`tr[data-job-id="${jobId}"][data-status=completed]`);
    expect(await text(`tr[data-job-id="${jobId}"]`)).toContain('aets');
    await screenshot(page, shots, '3-jobs');
  });

  test("the job's page: leaderboard, metrics by series and date, fan charts with actuals one date at a time or overlaid", async () => {
    await page.click(`tr[data-job-id="${jobId}"] a`);
    await page.waitForSelector('.leaderboard tr[data-model=aets]');
    await page.waitForSelector('.series-browser .fan-chart[data-drawn]');
    expect(await page.$$eval('.metrics-table tbody tr', (rows) => rows.length)).toBe(6);
    const leader = await page.$$eval('.leaderboard tr[data-model=aets] td', (cells) => cells.map((c) => c.textContent));
    expect(leader.slice(0, 4)).toEqual(['1', 'aets', 'this job', '42']);
    expect(Number(leader[4])).toBeGreaterThan(0);

    // The first creation date is shown first: history, its fan, and the actuals it is scored on.
    const single = await chartReading(page, COLORS);
    expect(single.labels).toEqual(expect.arrayContaining(['history', 'mean', 'actual']));
    expect(single.counts.actual).toBeGreaterThan(30);
    expect(single.counts.band).toBeGreaterThan(300);
    expect(single.counts.history).toBeGreaterThan(300);
    await screenshot(page, shots, '4-job-series');

    expect(await page.$$eval('select[name=fcd] option', (options) => options.map((o) => o.textContent))).toEqual(['2024-02-18', '2024-02-25', '2024-03-03']);
    await page.select('select[name=fcd]', '0');
    await page.waitForSelector('.fan-chart[data-drawn="1"]');
    await page.click('input[name=overlay]');
    await page.waitForSelector('.fan-chart[data-drawn="3"]');
    const overlaid = await chartReading(page, COLORS);
    expect(overlaid.labels.filter((l) => l.startsWith('mean '))).toEqual(['mean 2024-02-18', 'mean 2024-02-25', 'mean 2024-03-03']);
    expect(overlaid.counts.mean).toBeGreaterThan(20);
    expect(overlaid.counts.secondMean).toBeGreaterThan(20);
    expect(overlaid.counts.thirdMean).toBeGreaterThan(20);
    expect(await page.$$eval('.metrics-of-forecasts tbody tr', (rows) => rows.length)).toBe(3);
    await screenshot(page, shots, '5-job-overlay');

    // A row of the metrics table opens that series and date.
    await page.click('.metrics-table tbody tr:nth-child(5)');
    await page.waitForFunction(() => (document.querySelector('input[name=series]') as HTMLInputElement | null)?.value === '1');
    await page.waitForSelector('select[name=fcd]');
    expect(await page.$eval('select[name=fcd]', (s) => (s as HTMLSelectElement).value)).toBe('1');
    expect(await text('.series-browser')).toContain('store_b');
  });

  test('a Parquet upload is forecast through the beta endpoint and charted with its history, read in the browser', async () => {
    const parquet = await writeParquet(
      path.join(files, 'sales.parquet'),
      `SELECT 'p' || (k % 2) AS unique_id, TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS ds, 50.0 + k * 10 + 8 * sin(2 * pi() * d / 7) + d * 0.2 AS y
       FROM range(60) r(d), range(2) s(k)`,
    );
    await openPlayground();
    await (await page.$('input[name=file]'))!.uploadFile(parquet);
    await page.waitForFunction(() => document.querySelector('.playground')?.textContent?.includes('Parquet: sales.parquet'));
    await page.select('select[name=model]', 'seasonal-naive');
    await page.click('button[name=forecast]');
    await page.waitForSelector('.result .fan-chart[data-drawn]');
    const reading = await chartReading(page, COLORS);
    expect(reading.counts.mean).toBeGreaterThan(50);
    expect(reading.counts.band).toBeGreaterThan(1000);
    // The history is the file's own rows (60 days before a 14-day forecast): most of the width.
    expect(reading.labels).toEqual(expect.arrayContaining(['history', 'mean']));
    expect(reading.counts.history).toBeGreaterThan(300);
    expect(await page.$$eval('select[name=result-series] option', (o) => o.map((x) => x.textContent))).toEqual(['p0', 'p1']);
    await screenshot(page, shots, '6-playground-parquet');

    // As a backtest: `Backtest windows` cutoffs one horizon apart, the last one horizon before the file's end, each scored.
    await fill('input[name=horizon]', '7');
    await fill('input[name=windows]', '2');
    await page.click('button[name=backtest]');
    await page.waitForFunction(() => location.hash.startsWith('#/jobs/beta/'));
    const betaJob = (await page.evaluate(() => location.hash)).split('/').pop()!;
    await page.waitForSelector('.job-page[data-status=completed]', { timeout: 60_000 });
    const metrics = await (await api(`/v1-beta/forecast-jobs/${betaJob}/metrics?limit=100`)).json();
    const rows = metrics.rows as { cutoff: string; known_steps: number }[];
    expect([...new Set(rows.map((r) => r.cutoff.slice(0, 10)))].sort()).toEqual(['2024-02-15', '2024-02-22']);
    expect(rows.map((r) => r.known_steps)).toEqual([7, 7, 7, 7]);
  });

  test('a one-step forecast is drawn as points, its mean and its interval', async () => {
    await openPlayground();
    await fill('textarea[name=csv]', longCsv());
    await fill('input[name=horizon]', '1');
    await page.click('button[name=forecast]');
    await page.waitForSelector('.result .fan-chart[data-drawn]');
    const reading = await chartReading(page, COLORS);
    expect(reading.counts.mean).toBeGreaterThan(10);
  });

  test('bad input is shown with the line or the field it concerns', async () => {
    await openPlayground();
    await fill('textarea[name=csv]', 'unique_id,ds,y\na,2024-01-01,1\na,2024-01-02,abc\n');
    await page.click('button[name=forecast]');
    await page.waitForSelector('.playground .error');
    expect(await text('.playground .error')).toBe("line 3: y 'abc' is not a number");

    // The API's field paths are shown with the CSV's series ids.
    await fill('textarea[name=csv]', `${longCsv()}tiny,2024-01-01,5\n`);
    await page.select('select[name=model]', 'theta');
    await page.click('button[name=forecast]');
    await page.waitForFunction(() => document.querySelector('.playground .error')?.textContent?.includes('body.series[2] (tiny)'));
    expect(await text('.playground .error')).toContain('body.series[2] (tiny): theta needs at least 4 observations of history; got 1');

    // Backtest windows outside 1 to 100 (a huge count once froze the tab) are refused before anything is sent.
    await fill('textarea[name=csv]', longCsv());
    for (const windows of ['300000000', '1.5', '0']) {
      await fill('input[name=windows]', windows);
      await page.click('button[name=backtest]');
      await page.waitForFunction(() => document.querySelector('.playground .error')?.textContent?.includes('Backtest windows'));
      expect(await text('.playground .error')).toBe('Backtest windows: a whole number from 1 to 100');
      expect(await page.evaluate(() => location.hash)).toBe('#/playground');
    }
    await fill('input[name=windows]', '3');

    await fill('input[name=horizon]', '0');
    await page.click('button[name=forecast]');
    await page.waitForFunction(() => document.querySelector('.playground .error')?.textContent?.includes('body.horizon'));
    await screenshot(page, shots, '7-refused');
  });

  test('an address naming no possible job or schedule is said so, and nothing is asked of the API', async () => {
    const asked: string[] = [];
    const listen = (req: { url(): string }) => asked.push(req.url());
    page.on('request', listen);
    try {
      for (const [hash, message] of [
        ['#/jobs/forecast/..', "no job '..': a job's id is letters, digits and dashes"],
        ['#/schedules/..%2F..', "no schedule '..%2F..': a schedule's id is letters, digits and dashes"],
      ]) {
        await page.goto('about:blank');
        await page.goto(`${base}/${hash}`);
        await page.waitForSelector('.error');
        expect(await text('.error')).toBe(message);
      }
      await new Promise((r) => setTimeout(r, 1_500));
      expect(asked.filter((url) => /forecast-(jobs|schedules)/.test(url))).toEqual([]);
    } finally {
      page.off('request', listen);
    }
  });

  // Last: the cancelled job's chunks in flight still finish on the worker, and would slow what follows.
  test('a running job is cancelled from the jobs list', async () => {
    const series = hourlySeries(12, 24 * 12).map((s) => ({ ...s, fcds: [200, 210, 220, 230, 240, 250, 260, 270] }));
    const res = await api('/forecast-jobs?model=aarima', { method: 'POST', body: JSON.stringify({ series, horizon: 24, freq: 'H' }) });
    const { job_id } = (await res.json()) as { job_id: string };
    await page.goto(`${base}/#/jobs`);
    const row = `tr[data-job-id="${job_id}"]`;
    await page.waitForSelector(`${row}[data-status=in_progress] button.cancel`);
    await page.click(`${row} button.cancel`);
    await page.waitForSelector(`${row}[data-status=failed]`, { timeout: 60_000 });
    expect(await text(row)).toContain('failed: cancelled');
    await screenshot(page, shots, '8-cancelled');
    const taken = fs.readdirSync(shots).filter((f) => f.endsWith('.png'));
    expect(taken).toHaveLength(8);
    for (const shot of taken) expect(fs.statSync(path.join(shots, shot)).size).toBeGreaterThan(5_000);
  });
});
