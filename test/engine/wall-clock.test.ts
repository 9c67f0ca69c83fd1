import { expect, test } from 'vitest';
import { parseTimestamp, wallClockMillis } from '../../engine/time-index.ts';

test('wallClockMillis reads the local calendar fields as UTC, whatever the offset', () => {
  for (const text of ['2024-02-29', '2024-03-31T23:59:59.250+02:00', '2024-01-01 05:30', '1999-12-31T23:00:00Z', '0050-06-01', '2024-10-27T02:30:00-0500']) {
    const t = parseTimestamp(text)!.time;
    expect(wallClockMillis(text)).toBe(t.setZone('utc', { keepLocalTime: true }).toMillis());
  }
  expect(wallClockMillis('2024-01-01T10:00:00+05:00')).toBe(Date.UTC(2024, 0, 1, 10));
  expect(() => wallClockMillis('2024/01/01')).toThrow(RangeError);
});
