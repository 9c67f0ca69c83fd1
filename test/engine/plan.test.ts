import { expect, test } from 'vitest';
import { forecastsPerChunk, MAX_CHUNKS, splitIntoChunks } from '../../engine/jobs/chunking.ts';
import { contextSeries, historyWindow, planForecasts, seriesAreCoupled } from '../../engine/plan.ts';
import { refitDates } from '../../engine/tasks.ts';
import { modelEntry } from '../../models/contract/model-registry.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import type { ModelEntry } from '../../models/contract/model-registry.ts';

const globalModel: ModelEntry = {
  name: 'g',
  family: 'g',
  capabilities: { covariates: ['historical', 'future', 'static'], maxContext: null, needsWeights: false, global: true },
};
const localModel: ModelEntry = { name: 'l', family: 'l', capabilities: { covariates: [], maxContext: null, needsWeights: false, global: false } };

const request = ForecastRequest.parse({
  series: [
    {
      target: [1, 2, 3, 4, 5, 6],
      index: ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06'],
      fcds: [3, 5],
      hist_variables: { footfall: [10, 20, 30, 40, 50] },
      future_variables: { price: [1, 1, 2, 2, 3, 3, 4] },
      static_variables: { size: 7 },
    },
    { target: [9, 8, 7], index: ['2024-01-01', '2024-01-02', '2024-01-03'], only_as_context: true },
  ],
  horizon: 2,
  freq: 'D',
});

test('each forecast sees historical covariates only up to its creation date, future ones through its horizon', () => {
  const [a, b] = planForecasts(request, globalModel, null);
  expect(Array.from(a.task.history)).toEqual([1, 2, 3]);
  expect(a.task.covariates).toEqual({ hist: { footfall: [10, 20, 30] }, future: { price: [1, 1, 2, 2, 3] }, static: { size: 7 } });
  expect(b.task.covariates?.hist.footfall).toEqual([10, 20, 30, 40, 50]);
  expect(b.task.covariates?.future.price).toEqual([1, 1, 2, 2, 3, 3, 4]);
});

test('context limits covariates exactly as it limits the target', () => {
  const [a] = planForecasts({ ...request, context: 2 }, globalModel, null);
  expect(Array.from(a.task.history)).toEqual([2, 3]);
  expect(a.task.covariates?.hist.footfall).toEqual([20, 30]);
  expect(a.task.covariates?.future.price).toEqual([1, 2, 2, 3]);
  expect(historyWindow(10, null, 4)).toEqual([6, 10]);
  expect(historyWindow(3, 8, null)).toEqual([0, 3]);
});

test('global models get wall-clock times through the horizon, past the index end where needed', () => {
  const [, b] = planForecasts(request, globalModel, null);
  const day = 86_400_000;
  expect(Array.from(b.task.times!)).toEqual([0, 1, 2, 3, 4, 5, 6].map((d) => Date.UTC(2024, 0, 1) + d * day));
  expect(planForecasts(request, localModel, null)[0].task.times).toBeUndefined();
  const [ctx] = contextSeries(request, null);
  expect(ctx).toMatchObject({ seriesIndex: 1 });
  expect(Array.from(ctx.values)).toEqual([9, 8, 7]);
});

test('a job whose model couples the series is one chunk holding the whole request; others split by forecasts', () => {
  expect(splitIntoChunks(request, 1, true)).toEqual([{ seriesIndex: [0, 1], fcdPositions: [[0, 1], []], request }]);
  const local = splitIntoChunks(request, 1);
  expect(local.map((c) => [c.seriesIndex, c.fcdPositions, c.request.series.map((s) => s.fcds)])).toEqual([
    [[0], [[0]], [[3]]],
    [[0], [[1]], [[5]]],
  ]);
});

test('both kinds of job size chunks alike: at least the minimum, about 64 a job, at most 20,000 forecasts, never over MAX_CHUNKS', () => {
  expect(forecastsPerChunk(100, 64)).toBe(64);
  expect(forecastsPerChunk(8000, 64)).toBe(125);
  expect(forecastsPerChunk(8000, 1)).toBe(125);
  expect(forecastsPerChunk(480, 1)).toBe(8);
  expect(forecastsPerChunk(10_000_000, 64)).toBe(20_000);
  expect(forecastsPerChunk(100_000_000, 64)).toBe(100_000_000 / MAX_CHUNKS);
  // A forecast job of 2,000 series at four dates: 64 chunks of 125, not 125 of 64.
  const index = Array.from({ length: 20 }, (_, d) => `2024-01-${String(d + 1).padStart(2, '0')}`);
  const series = Array.from({ length: 2000 }, (_, i) => ({ target: index.map((_, t) => i + t), index, fcds: [8, 10, 12, 20] }));
  const chunks = splitIntoChunks(ForecastRequest.parse({ series, horizon: 2, freq: 'D' }), 64);
  expect(chunks).toHaveLength(64);
  expect(chunks.map((c) => c.fcdPositions.flat().length)).toEqual([...Array(63).fill(125), 8000 - 63 * 125]);
});

test('which requests couple their series: svc-global always, chronos-2 with is_global, timesfm-2p5 with covariates, local models never', () => {
  const plain = ForecastRequest.parse({ series: [{ target: [1, 2, 3], index: ['2024-01-01', '2024-01-02', '2024-01-03'] }], horizon: 2, freq: 'D' });
  const crossLearning = ForecastRequest.parse({ ...plain, model_config: { model: 'chronos-2', config: { is_global: true } } });
  const withFuture = ForecastRequest.parse({ ...plain, series: [{ ...plain.series[0], future_variables: { price: [1, 2, 3, 4, 5] } }] });
  const generated = ForecastRequest.parse({ ...plain, covariates: [{ type: 'temporal_features', config: {} }] });
  const coupled = (name: string, req: ForecastRequest) => seriesAreCoupled(req, modelEntry(name)!);
  expect([plain, withFuture].map((r) => coupled('svc-global', r))).toEqual([true, true]);
  expect([plain, crossLearning, withFuture].map((r) => coupled('chronos-2', r))).toEqual([false, true, false]);
  expect([plain, crossLearning, withFuture, generated].map((r) => coupled('timesfm-2p5', r))).toEqual([false, false, true, true]);
  expect([plain, withFuture].map((r) => coupled('aarima', r))).toEqual([false, false]);
  expect([plain, withFuture].map((r) => coupled('timesfm-2', r))).toEqual([false, true]);
});

test('refit dates: in date order, every date, the first, or every n-th from the first', () => {
  const fcds = [20, 6, 8, 10, 12];
  expect(Object.fromEntries(refitDates(fcds, 'every'))).toEqual({ 6: 6, 8: 8, 10: 10, 12: 12, 20: 20 });
  expect(Object.fromEntries(refitDates(fcds, 'once'))).toEqual({ 6: 6, 8: 6, 10: 6, 12: 6, 20: 6 });
  expect(Object.fromEntries(refitDates(fcds, 2))).toEqual({ 6: 6, 8: 6, 10: 10, 12: 10, 20: 20 });
  expect(Object.fromEntries(refitDates(fcds, 1))).toEqual(Object.fromEntries(refitDates(fcds, 'every')));
});
