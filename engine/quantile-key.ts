/** A quantile level as the decimal string the response uses as its key: 0.1 -> "0.1". */
export function quantileKey(level: number): string {
  const text = String(level);
  if (!text.includes('e')) return text;
  // Tiny levels (1e-7) print in exponent form; the key stays a plain decimal.
  return level.toFixed(20).replace(/0+$/, '');
}
