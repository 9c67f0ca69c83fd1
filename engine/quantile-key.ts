/**
 * A quantile level as the decimal string the response uses as its key: 0.1 -> "0.1".
 * JavaScript prints levels below 1e-6 in exponent form ("1.5e-7"); the key keeps the same
 * shortest round-trip digits written as a plain decimal ("0.00000015").
 */
export function quantileKey(level: number): string {
  const text = String(level);
  // Every level of 1e-6 or more prints plainly: no pattern to match (this runs per prediction).
  if (!text.includes('e')) return text;
  const match = /^(\d)(?:\.(\d+))?e-(\d+)$/.exec(text);
  if (!match) return text;
  const [, lead, rest = '', exponent] = match;
  return `0.${'0'.repeat(Number(exponent) - 1)}${lead}${rest}`;
}
