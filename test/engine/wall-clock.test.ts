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
  for (const text of [
    '2024-02-29',
    '2024-03-31T23:59:59.250+02:00',
    '2024-01-01 05:30',
    '1999-12-31T23:00:00Z',
    '0050-06-01',
    '0004-02-29',
    '2000-02-29',
    '9999-12-31T23:59:59',
    '2024-10-27T02:30:00-0500',
    '2024-06-01T00:00:00.123456789',
  ]) {
    expect(instantMillis(text)).toBe(parseTimestamp(text)!.time.toMillis());
  }
  for (const bad of [
    '2024-02-30',
    '2023-02-29',
    '1900-02-29',
    '0100-02-29',
    '2024-04-31',
    '2024-01-00',
    '2024-13-01',
    '2024-00-10',
    '2024-1-1',
    'yesterday',
    '2024-01-01T25:00',
    '2024-01-01T10:60',
    '2024-01-01T10:00:60',
    '',
  ]) {
    expect(parseTimestamp(bad)).toBeNull();
    expect(instantMillis(bad)).toBeNaN();
  }
});

test('the character scanner reads exactly what the luxon parser reads, on generated and mutated entries', () => {
  // A seeded generator of entries in every accepted shape, and of near misses made by changing,
  // dropping or inserting one character; instantMillis must be NaN exactly when parseTimestamp
  // refuses, and the same instant otherwise.
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  const two = (max: number) => String(Math.floor(random() * max)).padStart(2, '0');
  const generate = () => {
    let s = `${String(Math.floor(random() * 10_000)).padStart(4, '0')}-${two(14)}-${two(33)}`;
    if (random() < 0.8) {
      s += `${pick(['T', ' '])}${two(26)}:${two(62)}`;
      if (random() < 0.7) {
        s += `:${two(62)}`;
        if (random() < 0.4)
          s +=
            '.' +
            String(Math.floor(random() * 1e12))
              .padStart(12, '0')
              .slice(0, 1 + Math.floor(random() * 11));
      }
      if (random() < 0.5) s += pick(['Z', `+${two(24)}:${two(60)}`, `-${two(24)}${two(60)}`, `+${two(24)}`]);
    }
    return s;
  };
  const alphabet = '0123456789-:T .Z+x';
  const mutate = (s: string) => {
    const at = Math.floor(random() * (s.length + 1));
    const kind = random();
    if (kind < 0.33) return s.slice(0, at) + pick([...alphabet]) + s.slice(at + 1);
    if (kind < 0.66) return s.slice(0, at) + s.slice(at + 1);
    return s.slice(0, at) + pick([...alphabet]) + s.slice(at);
  };
  let valid = 0;
  for (let k = 0; k < 20_000; k++) {
    const text = k % 2 ? mutate(generate()) : generate();
    const expected = parseTimestamp(text)?.time.toMillis() ?? NaN;
    expect(instantMillis(text), text).toBe(expected);
    if (!Number.isNaN(expected)) valid++;
  }
  expect(valid).toBeGreaterThan(2_000); // both sides of the rule were exercised
});
