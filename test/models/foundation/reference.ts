/**
 * Reads the reference forecasts recorded by tools/export/export.py --tiny-fixture beside each
 * fixture model (test/fixtures/onnx/<model>/reference.json), and measures agreement.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll } from 'vitest';
import type { Runner } from '../../../models/families/foundation/onnx-session.ts';
import { requireInstalled, type FoundationName, type ManifestOf } from '../../../models/families/foundation/model-store.ts';

export const FIXTURES_DIR = path.resolve(new URL('../../fixtures/onnx', import.meta.url).pathname);

/** JSON arrays with null for NaN, as the export script writes them. */
export type JsonSeries = (number | null)[];

export const toFloat64 = (values: JsonSeries): Float64Array => Float64Array.from(values, (v) => (v === null ? NaN : v));

/**
 * A fixture model for a test file: its manifest, and a runner on one ONNX Runtime session opened
 * before the file's tests and released after them.
 */
export function useFixtureModel<N extends FoundationName>(name: N): { manifest: ManifestOf<N>; run: Runner } {
  const installed = requireInstalled(name, FIXTURES_DIR);
  let session: ort.InferenceSession | undefined;
  beforeAll(async () => {
    session = await ort.InferenceSession.create(installed.onnxPath);
  });
  afterAll(async () => session?.release());
  return { manifest: installed.manifest, run: (feeds) => session!.run(feeds) };
}

export function readReference<T>(model: string): T {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES_DIR, model, 'reference.json'), 'utf8')) as T;
}

/** Mean absolute value of a series' observed values: the magnitude its forecasts are computed at. */
export function level(values: ArrayLike<number>): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    if (Number.isNaN(values[i])) continue;
    sum += Math.abs(values[i]);
    n++;
  }
  return n === 0 ? 0 : sum / n;
}

/**
 * Largest relative error |got - expected| / max(|expected|, floor) over a set of values. The
 * floor is the series' level: the models compute a forecast as location + scale * output in
 * float32, so a forecast that happens to lie near zero for a series around 100 carries the
 * rounding of 100, and its error relative to itself would measure that coincidence, not the
 * adapter.
 */
export class Agreement {
  worst = 0;
  count = 0;
  where = '';

  add(got: ArrayLike<number>, expected: ArrayLike<number | null>, label: string, floor = 1e-6): void {
    if (got.length !== expected.length) throw new Error(`${label}: ${got.length} values, expected ${expected.length}`);
    for (let i = 0; i < got.length; i++) {
      const e = expected[i];
      if (e === null) throw new Error(`${label}[${i}]: the reference value is missing`);
      const err = Math.abs(got[i] - e) / Math.max(Math.abs(e), floor);
      this.count++;
      if (!(err <= this.worst)) {
        this.worst = Number.isNaN(err) ? Infinity : err;
        this.where = `${label}[${i}]: got ${got[i]}, reference ${e}`;
      }
    }
  }
}
