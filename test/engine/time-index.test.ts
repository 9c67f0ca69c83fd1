import { describe, expect, test } from 'vitest';
import { FREQUENCIES, type Freq } from '../../engine/frequencies.ts';
import { buildFutureIndex, parseTimestamp } from '../../engine/time-index.ts';

describe('buildFutureIndex continues the index on the calendar grid of every frequency', () => {
  const cases: [Freq, string, string[]][] = [
    ['10S', '2024-12-31T23:59:50', ['2025-01-01T00:00:00', '2025-01-01T00:00:10']],
    ['min', '2024-01-01T00:59:00Z', ['2024-01-01T01:00:00Z', '2024-01-01T01:01:00Z']],
    ['5min', '2024-01-01 23:55:00', ['2024-01-02 00:00:00', '2024-01-02 00:05:00']],
    ['10min', '2024-01-01T10:50', ['2024-01-01T11:00', '2024-01-01T11:10']],
    ['15min', '2024-01-01T10:45:00.500+02:00', ['2024-01-01T11:00:00.500+02:00', '2024-01-01T11:15:00.500+02:00']],
    ['30min', '2024-02-28T23:30:00', ['2024-02-29T00:00:00', '2024-02-29T00:30:00']],
    ['H', '2024-03-30T23:00:00-05:00', ['2024-03-31T00:00:00-05:00', '2024-03-31T01:00:00-05:00']],
    ['D', '2024-02-28', ['2024-02-29', '2024-03-01']],
    ['W', '2024-12-29', ['2025-01-05', '2025-01-12']],
    ['M', '2024-01-31', ['2024-02-29', '2024-03-31']],
    ['Q', '2023-12-31', ['2024-03-31', '2024-06-30']],
    ['Y', '2024-02-29', ['2025-02-28', '2026-02-28']],
  ];
  test('covers all twelve frequencies', () => expect(cases.map((c) => c[0]).sort()).toEqual([...FREQUENCIES].sort()));
  test.each(cases)('%s after %s', (freq, last, expected) => expect(buildFutureIndex(last, freq, 2)).toEqual(expected));
});

describe('monthly anchors', () => {
  test('a mid-month day keeps its day, clamped in short months, without drifting', () => {
    expect(buildFutureIndex('2024-01-30', 'M', 3)).toEqual(['2024-02-29', '2024-03-30', '2024-04-30']);
  });
  test('month starts stay month starts', () => expect(buildFutureIndex('2024-11-01', 'M', 3)).toEqual(['2024-12-01', '2025-01-01', '2025-02-01']));
  test('quarter ends continue on quarter ends', () => expect(buildFutureIndex('2024-09-30', 'Q', 2)).toEqual(['2024-12-31', '2025-03-31']));
  test('a leap day continues to leap days at month end', () => expect(buildFutureIndex('2024-02-29', 'Y', 4)[3]).toBe('2028-02-29'));
});

test('a date-only index forecast at a sub-daily frequency gains a time of day', () => {
  expect(buildFutureIndex('2024-01-01', 'H', 2)).toEqual(['2024-01-01T01:00:00', '2024-01-01T02:00:00']);
});

test('parseTimestamp refuses what is not a calendar date', () => {
  for (const bad of ['2024-02-30', '2024-13-01', '2024-1-1', 'yesterday', '2024-01-01T25:00', '']) expect(parseTimestamp(bad)).toBeNull();
  expect(parseTimestamp('2024-01-01T10:00:00+0530')?.time.offset).toBe(330);
});
