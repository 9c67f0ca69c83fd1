import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadCalendarPanels, monthsLater, MONTHLY_PANELS_LONG_PATH, MONTHLY_PANELS_PATH, QUARTERLY_PANELS_PATH } from '../../datasets/calendar-panels.ts';
import { testTempDir } from '../temp-root.ts';
import { loadShortSet, shortSetTimes } from './accuracy/short-sets.ts';

const write = (text: string): string => {
  const file = path.join(testTempDir('calendar-panels-'), 'set.csv.gz');
  fs.writeFileSync(file, gzipSync(text));
  return file;
};

describe('monthly-panels and quarterly-panels', () => {
  it('reads each series with its first month, and refuses a series that skips a month', () => {
    const good = write('unique_id,month,y\na,2019-11,1\na,2019-12,2\na,2020-01,3\nb,2001-05,7\n');
    expect(loadCalendarPanels(good, 1)).toEqual([
      { id: 'a', start: Date.UTC(2019, 10, 1), y: Float64Array.from([1, 2, 3]) },
      { id: 'b', start: Date.UTC(2001, 4, 1), y: Float64Array.from([7]) },
    ]);
    expect(() => loadCalendarPanels(write('unique_id,month,y\na,2019-11,1\na,2020-01,3\n'), 1)).toThrow(
      /line 3: a does not go on from the step before to 2020-01/,
    );
    // Quarterly rows are three months apart.
    expect(loadCalendarPanels(write('unique_id,month,y\nq,2019-10,1\nq,2020-01,2\n'), 3)[0].y).toEqual(Float64Array.of(1, 2));
    expect(() => loadCalendarPanels(write('unique_id,month,y\nq,2019-10,1\nq,2019-11,2\n'), 3)).toThrow(/line 3/);
    expect(() => loadCalendarPanels(write('unique_id,freq,y\na,12,1\n'), 1)).toThrow(/unexpected header/);
  });

  it("the benchmark's set: the last 18 months held out, every series on its own calendar", async () => {
    const set = await loadShortSet('monthly-panels');
    const raw = loadCalendarPanels(MONTHLY_PANELS_PATH, 1);
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

  it('the longer monthly set: 156 to 282 months of history, ends in many years', async () => {
    const set = await loadShortSet('monthly-panels-long');
    expect(set.length).toBe(loadCalendarPanels(MONTHLY_PANELS_LONG_PATH, 1).length);
    for (const s of set) expect([s.seasonLength, s.test.length, [156, 180, 210, 240, 282].includes(s.train.length)]).toEqual([12, 18, true]);
    const lastYears = new Set(set.map((s) => new Date(monthsLater(s.start!, s.train.length + 17)).getUTCFullYear()));
    expect(lastYears.size).toBe(12);
  });

  it('the quarterly set: the last 8 quarters held out, quarters three months apart', async () => {
    const set = await loadShortSet('quarterly-panels');
    expect(set.length).toBe(loadCalendarPanels(QUARTERLY_PANELS_PATH, 3).length);
    for (const s of set) expect([s.seasonLength, s.test.length, s.train.length >= 40]).toEqual([4, 8, true]);
    // visnights runs from 1998 Q1 to 2016 Q4: its holdout is 2015 Q1 to 2016 Q4.
    const zone = set.find((s) => s.id === 'visnights:NSWMetro')!;
    const times = shortSetTimes('quarterly-panels', zone.train.length, zone.train.length + 8, 0, zone.start);
    expect(new Date(times[zone.train.length]).toISOString().slice(0, 7)).toBe('2015-01');
    expect(new Date(times[times.length - 1]).toISOString().slice(0, 7)).toBe('2016-10');
  });
});
