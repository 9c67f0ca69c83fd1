import { DateTime } from 'luxon';
import { describe, expect, test } from 'vitest';
import { FREQUENCIES, type Freq } from '../../engine/frequencies.ts';
import { buildFutureIndex, formatTimestamp, instantMillis, parseTimestamp, scanIndex, wallClockMillis } from '../../engine/time-index.ts';

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
  // Offsets as RFC 3339 has them: hours 00 to 23, minutes 00 to 59.
  for (const bad of ['2024-01-01T00:00:00+99:99', '2024-01-01T00:00+24:00', '2024-01-01T00:00-0160']) {
    expect(parseTimestamp(bad), bad).toBeNull();
    expect(instantMillis(bad), bad).toBeNaN();
  }
  expect(instantMillis('2024-01-01T00:00:00-23:59')).toBe(Date.UTC(2024, 0, 1, 23, 59));
  expect(parseTimestamp('2024-01-01T10:00:00+0530')?.time.offset).toBe(330);
});

test('fixed and daily steps agree with stepping in luxon, for every shape of index entry', () => {
  // The service steps these frequencies on epoch milliseconds; luxon's calendar arithmetic on
  // the parsed entry is the oracle, formatted by the shared formatter.
  const lasts = [
    '2024-02-28T23:30:00',
    '2024-12-31 23:59:50',
    '2024-03-30T23:00:00-05:00',
    '2024-10-26T23:00+0130',
    '2024-06-30T23:45:00.5Z',
    '0099-12-31T23:00:00.123456',
    // Around the leap days that century years skip (1900, 2100) or keep (2000, year 0), and before 1970.
    '1900-02-28T23:00:00',
    '2000-02-28T22:30:00.25',
    '2100-02-28T23:59:59Z',
    '0000-02-28T23:00:00',
    '1969-12-31T23:59:59.999',
    '2024-02-28',
    '9999-12-24',
  ];
  for (const last of lasts) {
    for (const freq of ['10S', '15min', 'H', 'D', 'W'] as Freq[]) {
      const parsed = parseTimestamp(last)!;
      const format = parsed.format.dateOnly && !['D', 'W'].includes(freq) ? { ...parsed.format, dateOnly: false, seconds: true } : parsed.format;
      const steps =
        freq === 'D' ? { days: 1 } : freq === 'W' ? { days: 7 } : { milliseconds: { '10S': 10_000, '15min': 900_000, H: 3_600_000 }[freq as '10S'] };
      const count = last.startsWith('9999') ? 3 : 30;
      const expected = Array.from({ length: count }, (_, i) =>
        formatTimestamp(parsed.time.plus(Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, v * (i + 1)]))), format),
      );
      expect(buildFutureIndex(last, freq, count), `${freq} after ${last}`).toEqual(expected);
    }
  }
  expect(buildFutureIndex('9999-12-31', 'D', 1)).toEqual([
    formatTimestamp(DateTime.fromISO('+010000-01-01', { zone: 'utc' }), parseTimestamp('9999-12-31')!.format),
  ]);
});

describe('scanIndex reads an index once for validation and planning', () => {
  const index = ['2024-03-30T23:00:00+01:00', '2024-03-31 01:30', '2024-03-31T02:00:00.5Z', '2024-04-01'];
  test("gives each entry's wall-clock and instant milliseconds, as the single-entry readers do", () => {
    const scanned = scanIndex(index);
    expect(scanned.valid).toBe(true);
    expect(Array.from(scanned.wallClock)).toEqual(index.map(wallClockMillis));
    expect(Array.from(scanned.instant)).toEqual(index.map(instantMillis));
    expect(scanned.instant[0]).toBe(Date.UTC(2024, 2, 30, 22));
  });
  test('keeps the scan with the array: a second reader gets the same result without reading the entries again', () => {
    const fresh = [...index];
    expect(scanIndex(fresh)).toBe(scanIndex(fresh));
    expect(scanIndex([...index])).not.toBe(scanIndex(fresh));
  });
  test('marks an index with an invalid entry or a non-string invalid, the entry NaN', () => {
    const bad = scanIndex(['2024-01-01', '2024-02-30', 7]);
    expect(bad.valid).toBe(false);
    expect(Number.isNaN(bad.wallClock[1]) && Number.isNaN(bad.instant[2])).toBe(true);
    expect(bad.wallClock[0]).toBe(Date.UTC(2024, 0, 1));
  });
});
