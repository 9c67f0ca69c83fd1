import { z } from 'zod';
import { isSubDaily, STEP, type Freq } from '../../frequencies.ts';
import { wallClockMillis } from '../../time-index.ts';
import { codeOf, type ConfigError, type CovariateKind } from '../kind.ts';
import { DAY_MS, dayOf, stepPeriods, type StepPeriods } from '../periods.ts';
import { ecbCurrencyCodes, loadEcbRates, type CurrencyRates } from './ecb-rates.ts';

/**
 * The `forex` covariate: units of `target` one unit of `base` buys, from the ECB euro reference
 * rates shipped in this folder (cross rates through the euro: target-per-euro / base-per-euro).
 * Exchange rates are not known in advance, so models get it as a historical variable, cut at each
 * creation date (docs/decisions/041-generated-covariates.md). How days and steps take their rate:
 * `forexColumn`; a series that starts before a currency's first rate is refused (422).
 */

const PUBLICATION_HOUR_MS = 16 * 3_600_000;

/** The euro and every currency of the shipped ECB file. */
const CURRENCIES = ['EUR', ...ecbCurrencyCodes()].sort();
const Currency = codeOf(CURRENCIES, 'an ISO 4217 currency code of the ECB reference rates');

const ForexConfig = z.strictObject({ base: Currency.default('EUR'), target: Currency });

export const forex: CovariateKind<'forex', typeof ForexConfig> = {
  type: 'forex',
  config: ForexConfig,
  resolve(config, { freq, series }) {
    const base = config.base.toUpperCase();
    const target = config.target.toUpperCase();
    const errors: ConfigError[] = [];
    // Every series needs a rate from its first step on.
    const first = firstDay(base, target)!;
    series.forEach((s, i) => {
      const start = stepPeriods(Float64Array.of(wallClockMillis(s.index[0])), freq).start[0];
      const day = isSubDaily(freq) ? dayOf(start - PUBLICATION_HOUR_MS) : dayOf(start);
      if (day < first) {
        errors.push({
          path: [],
          message: `ECB rates ${base}/${target} start on ${new Date(first).toISOString().slice(0, 10)}; series ${i} starts on ${s.index[0]}, before any rate`,
        });
      }
    });
    if (errors.length > 0) return { errors };
    return { columns: [{ name: `forex:${base}/${target}`, kind: 'hist', build: (periods) => forexColumn(base, target, periods, freq) }] };
  },
};

/** First day both currencies have a rate (UTC midnight), or null when one is unknown. */
function firstDay(base: string, target: string): number | null {
  const ecb = loadEcbRates();
  let first = ecb.firstDay;
  for (const code of [base, target]) {
    if (code === 'EUR') continue;
    const c = ecb.currencies.get(code);
    if (!c) return null;
    first = Math.max(first, c.days[0]);
  }
  return first;
}

/** Units of the currency per euro on `day` (latest published at or before it); NaN before its first. */
function perEuroAsOf(c: CurrencyRates | null, day: number): number {
  if (!c) return 1;
  let lo = 0;
  let hi = c.days.length - 1;
  if (day < c.days[0]) return NaN;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (c.days[mid] <= day) lo = mid;
    else hi = mid - 1;
  }
  return c.perEuro[lo];
}

/**
 * The column over the steps. A day without a published rate (weekends, TARGET closing days, a
 * currency's gaps) takes the latest earlier published rate; so do days after a currency's last
 * rate (a currency replaced by the euro keeps its conversion rate; the rouble, suspended on
 * 2022-03-01, keeps its last rate) and days after the file ends. The ECB publishes around 16:00
 * CET, so a sub-daily step takes the rate of its day from 16:00 of the index's wall clock on, and
 * the previous rate before. A daily step takes its day's rate; weekly and longer steps the mean.
 */
function forexColumn(base: string, target: string, periods: StepPeriods, freq: Freq): Float64Array {
  const ecb = loadEcbRates();
  const currency = (code: string) => (code === 'EUR' ? null : (ecb.currencies.get(code) ?? null));
  const b = currency(base);
  const t = currency(target);
  const rate = (day: number) => perEuroAsOf(t, day) / perEuroAsOf(b, day);
  const step = STEP[freq];
  const out = new Float64Array(periods.start.length);
  for (let i = 0; i < out.length; i++) {
    if (step.kind === 'fixed') {
      out[i] = rate(dayOf(periods.start[i] - PUBLICATION_HOUR_MS));
    } else {
      let sum = 0;
      let n = 0;
      for (let d = dayOf(periods.start[i]); d < periods.end[i]; d += DAY_MS, n++) sum += rate(d);
      out[i] = sum / n;
    }
  }
  return out;
}
