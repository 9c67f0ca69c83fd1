import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadMonthlyPanels } from '../../datasets/monthly-panels.ts';
import { testTempDir } from '../temp-root.ts';
import { loadShortSet, shortSetTimes } from './accuracy/short-sets.ts';

const write = (text: string): string => {
  const file = path.join(testTempDir('monthly-panels-'), 'set.csv.gz');
  fs.writeFileSync(file, gzipSync(text));
  return file;
};

describe('monthly-panels', () => {
  it('reads each series with its first month, and refuses a series that skips a month', () => {
    const good = write('unique_id,month,y\na,2019-11,1\na,2019-12,2\na,2020-01,3\nb,2001-05,7\n');
    expect(loadMonthlyPanels(good)).toEqual([
      { id: 'a', start: Date.UTC(2019, 10, 1), y: Float64Array.from([1, 2, 3]) },
      { id: 'b', start: Date.UTC(2001, 4, 1), y: Float64Array.from([7]) },
    ]);
    expect(() => loadMonthlyPanels(write('unique_id,month,y\na,2019-11,1\na,2020-01,3\n'))).toThrow(
      /line 3: a does not go on from the month before to 2020-01/,
    );
    expect(() => loadMonthlyPanels(write('unique_id,freq,y\na,12,1\n'))).toThrow(/unexpected header/);
  });

  it("the benchmark's set: the last 18 months held out, every series on its own calendar", async () => {
    const set = await loadShortSet('monthly-panels');
    const raw = loadMonthlyPanels();
    expect(set.length).toBe(raw.length);
    for (const [i, s] of set.entries()) {
      expect(s.test.length).toBe(18);
      expect(s.train.length).toBeGreaterThanOrEqual(48);
      expect(Array.from(s.train).concat(Array.from(s.test))).toEqual(Array.from(raw[i].y));
    }
    // a10 (fpp2) ends in June 2008: its holdout is January 2007 to June 2008.
    const a10 = set.find((s) => s.id === 'fpp2:a10')!;
    const times = shortSetTimes('monthly-panels', a10.train.length, a10.train.length + 18, 0, a10.start);
    expect(new Date(times[a10.train.length]).toISOString().slice(0, 7)).toBe('2007-01');
    expect(new Date(times[times.length - 1]).toISOString().slice(0, 7)).toBe('2008-06');
  });
});
