import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MODEL_NAMES } from '../../models/contract/model-registry.ts';
import { KEY, testConfig, testServer } from '../api/helpers.ts';
import { tempDir } from '../beta/helpers.ts';
import { FIXTURES_DIR } from '../models/foundation/reference.ts';
import { findChromium, launch, listen, screenshot, screenshotFolder } from './browser.ts';

/**
 * The playground's model picker in headless Chromium reads the server's catalogue (GET /models):
 * the models that run here can be picked; the others are listed, disabled, as not installed on
 * this server. The server has one foundation model installed, so both kinds show.
 */

const chromium = findChromium();
if ('missing' in chromium) console.warn(`SKIPPED test/web/model-picker.test.ts (browser tests): ${chromium.missing}`);
const suite = 'missing' in chromium ? `the model picker in Chromium (skipped: ${chromium.missing})` : 'the model picker in Chromium';

interface Option {
  value: string;
  text: string;
  disabled: boolean;
  title: string;
}

describe.skipIf('missing' in chromium)(suite, () => {
  // tempDir registers its own removal, so it is called here, at the suite's level, not in a hook.
  const modelsDir = tempDir('web-models-');
  let app: FastifyInstance;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    fs.mkdirSync(path.join(modelsDir, 'timesfm-2'));
    for (const file of ['manifest.json', 'model.onnx']) fs.copyFileSync(path.join(FIXTURES_DIR, 'timesfm-2', file), path.join(modelsDir, 'timesfm-2', file));
    const config = testConfig();
    app = await testServer({ engine: { ...config.engine, modelThreads: 1, models: { ...config.engine.models, modelsDir } } });
    const base = await listen(app);
    browser = await launch((chromium as { path: string }).path);
    page = await browser.newPage();
    // Signed in as the sign-in form leaves a tab: the key in this tab's session storage.
    await page.goto(`${base}/`);
    await page.evaluate((key) => sessionStorage.setItem('forecast-api-key', key), KEY);
    // A new document: going to the same URL with another hash would keep the signed-out page.
    await page.goto('about:blank');
    await page.goto(`${base}/#/playground`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  test('offers the installed models and shows the others disabled, as not installed on this server', async () => {
    // The catalogue has answered once the picker lists every known model.
    await page.waitForFunction(
      (count) => (document.querySelector('select[name=model]') as HTMLSelectElement | null)?.options.length === count,
      {},
      MODEL_NAMES.length,
    );
    const options: Option[] = await page.$$eval('select[name=model] option', (all) =>
      all.map((o) => ({ value: o.value, text: o.textContent ?? '', disabled: o.disabled, title: o.title })),
    );
    await screenshot(page, screenshotFolder('forecasting-service-model-picker-screenshots'), 'model-picker');
    expect(options.map((o) => o.value).sort()).toEqual([...MODEL_NAMES].sort());

    const enabled = options.filter((o) => !o.disabled).map((o) => o.value);
    expect(enabled).toEqual(expect.arrayContaining(['aets', 'naive', 'svc-global', 'timesfm-2']));
    expect(enabled).not.toContain('chronos-2');
    // Selectable ones first, so the list opens on what can run.
    expect(options.findIndex((o) => o.disabled)).toBe(enabled.length);

    const chronos = options.find((o) => o.value === 'chronos-2')!;
    expect(chronos).toMatchObject({ disabled: true, text: 'chronos-2 (not installed on this server)' });
    expect(chronos.title).toBe('its exported model is not installed on this server');
    expect(options.find((o) => o.value === 'timesfm-2')).toMatchObject({ disabled: false, text: 'timesfm-2' });
    expect(await page.$eval('select[name=model]', (s) => (s as HTMLSelectElement).value)).toBe('aets');
  });

  test('an installed foundation model can be picked', async () => {
    await page.select('select[name=model]', 'timesfm-2');
    expect(await page.$eval('select[name=model]', (s) => (s as HTMLSelectElement).value)).toBe('timesfm-2');
  });
});
