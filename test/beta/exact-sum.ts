/**
 * References for the exact-sum tests (decision 065): the exact sum of doubles in BigInt
 * arithmetic, rounded to the nearest double once, and a double's unit in the last place.
 */

/** The exact sum of doubles, rounded to the nearest double: each is a whole multiple of 2^-1074. */
export function exactSum(values: number[]): number {
  const view = new DataView(new ArrayBuffer(8));
  let total = 0n;
  for (const x of values) {
    view.setFloat64(0, x);
    const word = view.getBigUint64(0);
    const exponent = Number((word >> 52n) & 0x7ffn);
    const fraction = word & ((1n << 52n) - 1n);
    const scaled = exponent === 0 ? fraction : (fraction | (1n << 52n)) << BigInt(exponent - 1);
    total += word >> 63n ? -scaled : scaled;
  }
  // Down to 60 bits, with a sticky bit for what was dropped, so that Number() rounds once.
  const magnitude = total < 0n ? -total : total;
  const drop = Math.max(0, magnitude.toString(2).length - 60);
  let kept = magnitude >> BigInt(drop);
  if (kept << BigInt(drop) !== magnitude) kept |= 1n;
  return Math.sign(Number(total)) * Number(kept) * 2 ** (drop - 1074);
}

/** A unit in the last place of a normal double x. */
export const ulp = (x: number): number => 2 ** (Math.floor(Math.log2(Math.abs(x))) - 52);
