import { describe, expect, test } from 'vitest';
import {
  addDuration,
  duration,
  durationProblem,
  floorToGrid,
  isoDuration,
  isoTimestamp,
  parseDuration,
  seasonLengthFor,
  seasonLengthsFor,
  stepsBetween,
  wholeSteps,
} from '../../engine/beta/duration.ts';

const utc = (text: string) => Date.parse(text);

describe('beta duration grammar', () => {
  test('a whole number and a unit: s, min, h, d, w, mo, q, y', () => {
    expect(parseDuration('15min')).toMatchObject({ kind: 'fixed', ms: 15 * 60_000 });
    expect(parseDuration('1h')).toMatchObject({ kind: 'fixed', ms: 3_600_000 });
    expect(parseDuration('7d')).toMatchObject({ kind: 'fixed', ms: 7 * 86_400_000 });
    expect(parseDuration('1w')).toMatchObject({ kind: 'fixed', ms: 7 * 86_400_000 });
    expect(parseDuration('1mo')).toMatchObject({ kind: 'months', months: 1 });
    expect(parseDuration('1q')).toMatchObject({ kind: 'months', months: 3 });
    expect(parseDuration('2y')).toMatchObject({ kind: 'months', months: 24 });
  });

  test.each(['0d', '1.5h', 'd', '1 d', '1D', '-1d', '1month', 'P1D', ''])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });

  test('"m" alone is ambiguous and says so', () => {
    expect(parseDuration('5m')).toBeNull();
    expect(durationProblem('5m')).toMatch(/ambiguous.*'min'.*'mo'/);
  });

  test('whole numbers of steps, never across fixed and calendar units', () => {
    expect(wholeSteps(duration('7d'), duration('1d'))).toBe(7);
    expect(wholeSteps(duration('2w'), duration('7d'))).toBe(2);
    expect(wholeSteps(duration('1d'), duration('1h'))).toBe(24);
    expect(wholeSteps(duration('1y'), duration('1q'))).toBe(4);
    expect(wholeSteps(duration('10d'), duration('1w'))).toBeNull();
    expect(wholeSteps(duration('1mo'), duration('1d'))).toBeNull();
  });

  test('ISO 8601 durations', () => {
    expect(isoDuration(duration('1d'))).toBe('P1D');
    expect(isoDuration(duration('1h'), 3)).toBe('PT3H');
    expect(isoDuration(duration('90min'))).toBe('PT1H30M');
    expect(isoDuration(duration('36h'))).toBe('P1DT12H');
    expect(isoDuration(duration('1w'), 2)).toBe('P14D');
    expect(isoDuration(duration('1mo'), 14)).toBe('P1Y2M');
    expect(isoDuration(duration('1y'))).toBe('P1Y');
    expect(isoDuration(duration('10s'))).toBe('PT10S');
  });
});

describe('the frequency grid', () => {
  test('weeks (1w and 7d) start on Monday, months on the 1st, quarters on calendar quarters', () => {
    // 2024-01-05 is a Friday; its week starts Monday 2024-01-01.
    expect(isoTimestamp(floorToGrid(utc('2024-01-05T13:00:00Z'), duration('1w')))).toBe('2024-01-01T00:00:00Z');
    expect(isoTimestamp(floorToGrid(utc('2024-01-05T13:00:00Z'), duration('7d')))).toBe('2024-01-01T00:00:00Z');
    expect(isoTimestamp(floorToGrid(utc('2024-05-17T08:00:00Z'), duration('1mo')))).toBe('2024-05-01T00:00:00Z');
    expect(isoTimestamp(floorToGrid(utc('2024-05-17T08:00:00Z'), duration('1q')))).toBe('2024-04-01T00:00:00Z');
    expect(isoTimestamp(floorToGrid(utc('2024-05-17T08:47:00Z'), duration('15min')))).toBe('2024-05-17T08:45:00Z');
  });

  test('calendar arithmetic clamps the day of month', () => {
    expect(isoTimestamp(addDuration(utc('2024-03-31T00:00:00Z'), duration('1mo'), -1))).toBe('2024-02-29T00:00:00Z');
    expect(isoTimestamp(addDuration(utc('2024-01-31T00:00:00Z'), duration('1q'), 1))).toBe('2024-04-30T00:00:00Z');
    expect(stepsBetween(utc('2023-11-01T00:00:00Z'), utc('2024-02-01T00:00:00Z'), duration('1mo'))).toBe(3);
  });

  test('season lengths: the first natural cycle holding a whole number of steps', () => {
    const season = (text: string) => seasonLengthFor(duration(text));
    expect([season('1h'), season('15min'), season('1min'), season('10s'), season('1d'), season('1w'), season('7d'), season('2w')]).toEqual([
      24, 96, 60, 360, 7, 52, 52, 26,
    ]);
    expect([season('1mo'), season('1q'), season('6mo'), season('1y'), season('5h')]).toEqual([12, 4, 2, 1, 1]);
  });

  test('every season length (mstl): the first two natural cycles holding whole numbers of steps', () => {
    const seasons = (text: string) => seasonLengthsFor(duration(text));
    expect(['1h', '15min', '1min', '1d', '1w', '1mo', '5h'].map(seasons)).toEqual([[24, 168], [96, 672], [60, 1440], [7, 364], [52], [12], [1]]);
  });
});
