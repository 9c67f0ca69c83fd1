import { expect, test } from 'vitest';
import { instantMillis, parseTimestamp, wallClockMillis } from '../../engine/time-index.ts';

test('wallClockMillis reads the local calendar fields as UTC, whatever the offset', () => {
  for (const text of ['2024-02-29', '2024-03-31T23:59:59.250+02:00', '2024-01-01 05:30', '1999-12-31T23:00:00Z', '0050-06-01', '2024-10-27T02:30:00-0500']) {
    const t = parseTimestamp(text)!.time;
    expect(wallClockMillis(text)).toBe(t.setZone('utc', { keepLocalTime: true }).toMillis());
  }
  expect(wallClockMillis('2024-01-01T10:00:00+05:00')).toBe(Date.UTC(2024, 0, 1, 10));
  expect(() => wallClockMillis('2024/01/01')).toThrow(RangeError);
});

test('instantMillis agrees with the full parser on valid entries and refuses the same invalid ones', () => {
  for (const text of ['2024-02-29', '2024-03-31T23:59:59.250+02:00', '2024-01-01 05:30', '1999-12-31T23:00:00Z', '0050-06-01', '2024-10-27T02:30:00-0500', '2024-06-01T00:00:00.123456789']) {
    expect(instantMillis(text)).toBe(parseTimestamp(text)!.time.toMillis());
  }
  for (const bad of ['2024-02-30', '2023-02-29', '2024-13-01', '2024-00-10', '2024-1-1', 'yesterday', '2024-01-01T25:00', '2024-01-01T10:60', '2024-01-01T10:00:60', '']) {
    expect(parseTimestamp(bad)).toBeNull();
    expect(instantMillis(bad)).toBeNaN();
  }
});
