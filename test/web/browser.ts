import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * The browser tests' tools: Debian's Chromium driven by puppeteer-core (puppeteer's own browser
 * download cannot work here; scripts/ensure-chromium.sh installs the package where it can), a
 * folder for screenshots, and a reading of what a chart has drawn.
 */

/** The Chromium to drive, or why there is none (the tests then report themselves skipped). */
export function findChromium(): { path: string } | { missing: string } {
  // CHROMIUM_PATH, when set, is the only browser tried (the way to point at another, or at none).
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
  const found = candidates.find((p) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (found) return { path: found };
  return {
    missing: `no Chromium at ${candidates.join(', ')} (npm test installs Debian's chromium package where it runs as root with apt-get; elsewhere install it and set CHROMIUM_PATH)`,
  };
}

export async function launch(executablePath: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath,
    headless: true,
    // --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1280,1000'],
    defaultViewport: { width: 1280, height: 1000, deviceScaleFactor: 1 },
  });
}

/** Where the running test server answers. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/**
 * The folder of the latest run's screenshots, kept after it for a person to look at (emptied when a
 * run starts). Each test file names its own, since files run side by side.
 */
export function screenshotFolder(name = 'forecasting-service-dashboard-screenshots'): string {
  const dir = path.join(os.tmpdir(), name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  console.log(`dashboard screenshots: ${dir}`);
  return dir;
}

export async function screenshot(page: Page, dir: string, name: string): Promise<string> {
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * How many pixels of each colour a chart (the fan chart unless `selector` names another) shows
 * inside its plotting area (uPlot's overlay box, so axes and labels do not count), over the white
 * it is drawn on, within `tolerance` per channel; and its legend's labels.
 */
export async function chartReading(
  page: Page,
  colors: Record<string, [number, number, number]>,
  tolerance = 10,
  selector = '.fan-chart',
): Promise<{ counts: Record<string, number>; labels: string[]; plotPixels: number }> {
  return page.$eval(
    selector,
    (chart, colors, tolerance) => {
      const canvas = chart.querySelector('canvas')!;
      const over = chart.querySelector<HTMLElement>('.u-over')!;
      const scale = canvas.width / canvas.getBoundingClientRect().width;
      const [x, y, w, h] = [over.offsetLeft, over.offsetTop, over.offsetWidth, over.offsetHeight].map((v) => Math.round(v * scale));
      const pixels = canvas.getContext('2d')!.getImageData(x, y, w, h).data;
      const counts: Record<string, number> = Object.fromEntries(Object.keys(colors).map((k) => [k, 0]));
      for (let i = 0; i < pixels.length; i += 4) {
        // The canvas is transparent where nothing is drawn: each pixel as it shows over the page's white.
        const alpha = pixels[i + 3] / 255;
        const [pr, pg, pb] = [0, 1, 2].map((c) => pixels[i + c] * alpha + 255 * (1 - alpha));
        for (const [name, [r, g, b]] of Object.entries(colors))
          if (Math.abs(pr - r) <= tolerance && Math.abs(pg - g) <= tolerance && Math.abs(pb - b) <= tolerance) counts[name]++;
      }
      const labels = [...chart.querySelectorAll('.u-legend .u-series .u-label')].map((e) => e.textContent ?? '');
      return { counts, labels, plotPixels: w * h };
    },
    colors,
    tolerance,
  );
}
