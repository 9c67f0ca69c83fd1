import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FORECAST_COLORS, rgb } from '../../web/src/chart/palette.ts';
import { THRESHOLD_COLOR } from '../../web/src/chart/trend-data.ts';
import { formatMetric } from '../../web/src/format.ts';
import { KEY } from '../api/helpers.ts';
import { tempDir } from '../beta/helpers.ts';
import { dailyQuery, scheduleTestConfig } from '../jobs/schedule-data.ts';
import { startJobsStack, until, type JobsStack } from '../jobs/temporal-env.ts';
import { chartReading, findChromium, launch, listen, screenshot, screenshotFolder } from './browser.ts';

/**
 * The dashboard's schedule views in headless Chromium against the real service (Temporal dev
 * server, worker, job store): a weekly schedule over a folder of Parquet, run twice by trigger,
 * found in the list; its page shows the spec, the next runs in its time zone, the runs and a
 * trend chart with a point per run; Pause and Resume change what the API reports.
 */

const chromium = findChromium();
if ('missing' in chromium) console.warn(`SKIPPED test/web/schedules.test.ts (browser tests): ${chromium.missing}`);
const suite = 'missing' in chromium ? `the schedule pages in Chromium (skipped: ${chromium.missing})` : 'the schedule pages in Chromium';

/** How long a wait on the service may take: its calls to the Temporal dev server slow down on a loaded machine. */
const SLOW_MS = 90_000;

/** The trend's first line and the alert's threshold, as drawn over white (web/src/chart/). */
const COLORS = { line: rgb(FORECAST_COLORS[0]), threshold: rgb(THRESHOLD_COLOR) };

interface Run {
  job_id: string;
  status: string;
  metrics: { mae: number }[];
  alerted: boolean | null;
}

describe.skipIf('missing' in chromium)(suite, () => {
  // tempDir registers its own removal, so it is called here, at the suite's level, not in a hook.
  const root = tempDir('web-schedules-root-');
  let stack: JobsStack;
  let base: string;
  let browser: Browser;
  let page: Page;
  let shots: string;
  let id: string;
  let runs: Run[];

  /** A call to the API; it must succeed. A body is JSON (and only a call with one says so: an empty JSON body is refused). */
  const api = async (url: string, init: RequestInit = {}) => {
    const type: Record<string, string> = init.body ? { 'content-type': 'application/json' } : {};
    const res = await fetch(`${base}${url}`, { ...init, headers: { authorization: `Bearer ${KEY}`, ...type } });
    const answer = await res.json();
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  /** The schedule's runs once `count` have completed with their metrics recorded (a run reads completed a moment before). */
  const scoredRuns = (count: number) =>
    until(
      async () => {
        const { runs } = (await api(`/v1-beta/forecast-schedules/${id}/runs`)) as { runs: Run[] };
        return runs.filter((r) => r.status === 'completed' && r.metrics.length > 0).length === count && runs;
      },
      SLOW_MS,
      `${count} scored run(s)`,
    );
  const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
  /** Waits for the page to show the schedule paused or not, its buttons usable again; a timeout says what the page shows instead. */
  const shownPaused = (paused: boolean) =>
    page
      .waitForSelector(`.schedule-page[data-paused=${paused}] button[name=${paused ? 'resume' : 'pause'}]:not([disabled])`, { timeout: SLOW_MS })
      .catch(async (error: Error) => {
        const shown = await page.$eval(
          '.schedule-page',
          (el) => `data-paused=${(el as HTMLElement).dataset.paused}: ${el.querySelector('.error')?.textContent ?? 'no error shown'}`,
        );
        throw new Error(`${error.message}; the page shows ${shown}`);
      });

  beforeAll(async () => {
    shots = screenshotFolder('forecasting-service-schedule-screenshots');
    stack = await startJobsStack(await scheduleTestConfig(root), 'web-schedules', 2);
    base = await listen(stack.app);
    // Mondays at 06:00 in Berlin: no run falls due during the test, so the two runs are the triggered ones.
    const body = { query: dailyQuery(), spec: { cron: '0 6 * * 1', time_zone: 'Europe/Berlin' }, alert: { metric: 'mae', above: 1 } };
    id = (await api('/v1-beta/forecast-schedules?model=naive', { method: 'POST', body: JSON.stringify(body) })).schedule_id;
    // One after the other, so that the chart's two points are at two times.
    await api(`/v1-beta/forecast-schedules/${id}/trigger`, { method: 'POST' });
    await scoredRuns(1);
    await api(`/v1-beta/forecast-schedules/${id}/trigger`, { method: 'POST' });
    runs = await scoredRuns(2);
    browser = await launch((chromium as { path: string }).path);
    page = await browser.newPage();
    await page.goto(base);
    // Signed in as the sign-in form does it (the dashboard's own test covers the form): the key in this tab's session storage.
    await page.evaluate((key) => sessionStorage.setItem('forecast-api-key', key), KEY);
    await page.reload();
    await page.waitForSelector('header.top nav');
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('the list shows the schedule, its timing and state; its link opens its page', async () => {
    await page.goto(`${base}/#/schedules`);
    const row = `tr[data-schedule-id="${id}"]`;
    await page.waitForSelector(row);
    const cells = await page.$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent));
    expect(cells.slice(1, 5)).toEqual(['naive', 'cron 0 6 * * 1', 'Europe/Berlin', 'active']);
    await screenshot(page, shots, '1-schedules');
    await page.click(`${row} a`);
    await page.waitForSelector('.schedule-page[data-paused=false]');
    expect(await page.evaluate(() => location.hash)).toBe(`#/schedules/${id}`);
  });

  test('its page: the spec, the next runs in its time zone, the runs with their metrics, and a point per run on the trend', async () => {
    await page.waitForSelector('.trend-chart[data-drawn="2"]');
    expect(await text('.schedule-details .spec')).toBe('cron 0 6 * * 1 in Europe/Berlin');
    expect(await text('.schedule-details .model')).toBe('naive');
    expect(await text('.schedule-details .overlap')).toBe('skip');

    // The next runs are the API's, each a Monday at 06:00 on Berlin's wall clock.
    const schedule = await api(`/v1-beta/forecast-schedules/${id}`);
    const next = await page.$$eval('.next-runs li', (items) => items.map((li) => ({ at: li.dataset.at, text: li.textContent ?? '' })));
    expect(next.map((n) => n.at)).toEqual(schedule.next_runs.slice(0, 5));
    expect(next.length).toBeGreaterThan(1);
    for (const { text } of next) expect(text).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC \(Mon \d{4}-\d\d-\d\d 06:00 Europe\/Berlin\)$/);

    // The runs, newest first: each job's link, its status, its pooled MAE, and the alert it crossed.
    const rows = await page.$$eval('.schedule-runs tbody tr', (trs) =>
      trs.map((tr) => ({
        job: tr.dataset.jobId,
        status: tr.dataset.status,
        href: tr.querySelector('a')?.getAttribute('href'),
        mae: tr.querySelector('[data-metric=mae]')?.textContent,
        alerted: tr.querySelector('.alerted-cell')?.textContent,
      })),
    );
    expect(rows).toEqual(
      runs.map((r) => ({
        job: r.job_id,
        status: 'completed',
        href: `#/jobs/beta/${r.job_id}`,
        mae: formatMetric(r.metrics[0].mae),
        alerted: r.alerted ? 'yes' : 'no',
      })),
    );
    expect(runs.every((r) => r.alerted)).toBe(true);

    // The trend of MAE (the alert's metric): the runs' points on one line, and the alert's threshold below them.
    const mae = await chartReading(page, COLORS, 10, '.trend-chart');
    expect(mae.labels).toEqual(['scheduled', 'naive · sales', 'alert above 1']);
    expect(mae.counts.line).toBeGreaterThan(100);
    expect(mae.counts.threshold).toBeGreaterThan(50);
    await screenshot(page, shots, '2-schedule');

    // Another metric: its line, without the alert's threshold.
    await page.select('select[name=trend-metric]', 'wape');
    await page.waitForFunction(() => document.querySelector('.trend-chart .u-legend')?.textContent?.includes('alert') === false);
    await page.waitForSelector('.trend-chart[data-drawn="2"]');
    const wape = await chartReading(page, COLORS, 10, '.trend-chart');
    expect(wape.labels).toEqual(['scheduled', 'naive · sales']);
    expect(wape.counts.line).toBeGreaterThan(100);
    expect(wape.counts.threshold).toBe(0);
  });

  test('Pause and Resume change what the API reports; a run opens its job', async () => {
    await page.waitForSelector('button[name=pause]:not([disabled])');
    await page.click('button[name=pause]');
    await shownPaused(true);
    expect(await api(`/v1-beta/forecast-schedules/${id}`)).toMatchObject({ paused: true, next_runs: [] });
    expect(await text('.next-runs-none')).toBe('None while paused.');
    await screenshot(page, shots, '3-paused');

    await page.click('button[name=resume]');
    await shownPaused(false);
    const resumed = await api(`/v1-beta/forecast-schedules/${id}`);
    expect(resumed.paused).toBe(false);
    expect(resumed.next_runs.length).toBeGreaterThan(0);
    await page.waitForSelector('.next-runs li');

    await page.click(`.schedule-runs tr[data-job-id="${runs[0].job_id}"] a`);
    await page.waitForSelector('.job-page[data-status=completed]');
    expect(await text('.job-page h2')).toContain(runs[0].job_id);
  }, 240_000);
});
