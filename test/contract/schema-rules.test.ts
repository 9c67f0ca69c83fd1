import { describe, expect, test } from 'vitest';
import { buildOpenApiDocument } from '../../api/openapi.ts';
import { ecbCurrencyCodes, loadEcbRates } from '../../engine/covariates/forex/ecb-rates.ts';
import { ForecastRequest, TIMESTAMP_PATTERN } from '../../engine/request-schema.ts';
import { instantMillis } from '../../engine/time-index.ts';
import { lcg } from '../models/lcg.ts';

/**
 * Where the OpenAPI document states a rule that validation checks another way (a regular
 * expression beside a hand-written scanner, an enum read from a file's header), both must take
 * exactly the same values: a client must never be refused a value the document allows, nor be
 * told a value is wrong that the server takes.
 */

const random = lcg(20_241_123);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
const digits = (n: number) => Array.from({ length: n }, () => String(Math.floor(random() * 10))).join('');
const two = (max: number) => String(Math.floor(random() * (max + 1))).padStart(2, '0');

/** Index entries near the edge of the accepted shape: real and impossible days, every optional part. */
function candidateTimestamp(): string {
  const year = pick(['2024', '2023', '1900', '2000', '2100', '0000', '0004', '9999', digits(4)]);
  const day = pick(['01', '28', '29', '30', '31', '00', '32', two(39)]);
  let text = `${year}-${pick(['01', '02', '04', '06', '09', '11', '12', '00', '13', two(19)])}-${day}`;
  if (random() < 0.6) {
    text += `${pick(['T', ' ', 't', '_'])}${pick(['00', '23', '24', two(29)])}:${pick(['00', '59', '60', two(69)])}`;
    if (random() < 0.6) text += `:${pick(['00', '59', '60', two(69)])}${random() < 0.4 ? `.${digits(Math.floor(random() * 11))}` : ''}`;
    if (random() < 0.5) text += pick(['Z', 'z', `+${two(99)}:${two(99)}`, `-${two(99)}${two(99)}`, `+${two(99)}`, `+${two(99)}:${digits(1)}`]);
  }
  return text;
}

/** The same with one character changed, dropped or added somewhere. */
function mutated(text: string): string {
  const at = Math.floor(random() * (text.length + 1));
  const char = pick(['0', '9', '-', ':', 'T', ' ', '.', 'Z', '+', '\n', '٣', 'x']);
  const how = Math.floor(random() * 3);
  if (how === 0) return text.slice(0, at) + char + text.slice(at + 1);
  if (how === 1) return text.slice(0, at) + text.slice(at + 1);
  return text.slice(0, at) + char + text.slice(at);
}

describe('index entries', () => {
  test('the pattern the document shows accepts exactly what the scanner reads', () => {
    const disagreements: string[] = [];
    let accepted = 0;
    for (let i = 0; i < 40_000; i++) {
      const text = i % 2 === 0 ? candidateTimestamp() : mutated(candidateTimestamp());
      const byScanner = !Number.isNaN(instantMillis(text));
      if (byScanner) accepted++;
      if (TIMESTAMP_PATTERN.test(text) !== byScanner) disagreements.push(JSON.stringify(text));
    }
    expect(disagreements.slice(0, 20)).toEqual([]);
    // Both sides of the edge were tried.
    expect(accepted).toBeGreaterThan(2_000);
    expect(accepted).toBeLessThan(35_000);
  });

  test('leap days follow the Gregorian rule in the pattern too', () => {
    for (const [day, ok] of [
      ['2024-02-29', true],
      ['2023-02-29', false],
      ['2000-02-29', true],
      ['1900-02-29', false],
      ['0000-02-29', true],
      ['2024-04-31', false],
    ] as const) {
      expect(TIMESTAMP_PATTERN.test(day), day).toBe(ok);
      expect(!Number.isNaN(instantMillis(day)), day).toBe(ok);
    }
  });
});

describe('numeric target strings', () => {
  const target = (value: unknown) => ForecastRequest.safeParse({ series: [{ target: [value], index: ['2024-01-01'] }], horizon: 1, freq: 'D' });

  test('every string the pattern admits is a finite number', () => {
    for (const text of [' 12.5 ', '-.5', '+3e-7', '1.', `${'9'.repeat(200)}e99`, `${'9'.repeat(200)}.${'9'.repeat(300)}e+99`, '\t\r\n7\n']) {
      expect(target(text).success, text).toBe(true);
    }
  });

  test('what could overflow, or is no ASCII number, is refused', () => {
    for (const text of [`${'9'.repeat(201)}`, '1e100', '1e308', '٣', '1,5', '', ' ', 'NaN', 'Infinity', '0x10', '\u00a05']) {
      expect(target(text).success, JSON.stringify(text)).toBe(false);
    }
  });
});

describe('code lists', () => {
  const schemas = (buildOpenApiDocument('aets') as unknown as { components: { schemas: Record<string, { oneOf?: unknown[] }> } }).components.schemas;
  const covariate = (type: string) =>
    (schemas.Covariate.oneOf as { properties: { type: { const: string }; config: { properties: Record<string, { enum?: string[] }> } } }[]).find(
      (c) => c.properties.type.const === type,
    )!.properties.config.properties;

  test("the currencies read from the ECB file's header are the ones it has rates for", () => {
    expect(ecbCurrencyCodes().sort()).toEqual([...loadEcbRates().currencies.keys()].sort());
  });

  test('the document lists countries and currencies in both cases the server takes', () => {
    expect(covariate('holidays').country.enum).toEqual(expect.arrayContaining(['US', 'us', 'DE', 'de']));
    expect(covariate('events').country.enum).toEqual(expect.arrayContaining(['Global', 'global', 'US', 'us']));
    expect(covariate('forex').target.enum).toEqual(expect.arrayContaining(['EUR', 'eur', 'USD', 'usd', 'JPY']));
    expect(covariate('forex').target.enum).not.toContain('Usd');
  });
});
