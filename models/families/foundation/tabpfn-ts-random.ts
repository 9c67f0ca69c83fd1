/**
 * numpy's `np.random.default_rng(seed)` (numpy 2.x: `SeedSequence` and the PCG64 bit generator)
 * and the draw TabPFN's ensemble members make with it: `Generator.permutation(n)`. Each member's
 * feature shuffle and its category shuffle are permutations drawn from a generator seeded with the
 * member's seed (the manifest records the seeds, which the regressor draws from its random_state
 * alone), so the orders are the reference's own only if the generator is reproduced bit for bit.
 */

const M32 = 0xffffffffn;
const M64 = (1n << 64n) - 1n;
const M128 = (1n << 128n) - 1n;
/** PCG64's 128-bit LCG multiplier (PCG_DEFAULT_MULTIPLIER_128). */
const PCG_MULT = (0x2360ed051fc65da4n << 64n) | 0x4385df649fccf645n;

const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;

/** `SeedSequence(seed).generate_state(words, uint32)` for a non-negative integer seed. */
export function seedSequenceState(seed: number, words: number): Uint32Array {
  // The seed as 32-bit words, least significant first (_coerce_to_uint32_array).
  const entropy: number[] = [];
  let rest = BigInt(seed);
  do {
    entropy.push(Number(rest & M32));
    rest >>= 32n;
  } while (rest > 0n);
  let hashConst = INIT_A;
  const hashmix = (value: number): number => {
    let v = (value ^ hashConst) >>> 0;
    hashConst = Math.imul(hashConst, MULT_A) >>> 0;
    v = Math.imul(v, hashConst) >>> 0;
    return (v ^ (v >>> 16)) >>> 0;
  };
  const mix = (x: number, y: number): number => {
    const r = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
    return (r ^ (r >>> 16)) >>> 0;
  };
  const pool = new Uint32Array(POOL_SIZE);
  for (let i = 0; i < POOL_SIZE; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
  for (let src = 0; src < POOL_SIZE; src++) for (let dst = 0; dst < POOL_SIZE; dst++) if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
  for (let src = POOL_SIZE; src < entropy.length; src++) for (let dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
  const out = new Uint32Array(words);
  let constB = INIT_B;
  for (let i = 0; i < words; i++) {
    let v = (pool[i % POOL_SIZE] ^ constB) >>> 0;
    constB = Math.imul(constB, MULT_B) >>> 0;
    v = Math.imul(v, constB) >>> 0;
    out[i] = (v ^ (v >>> 16)) >>> 0;
  }
  return out;
}

/** `np.random.default_rng(seed)`: PCG64 (XSL-RR output of a 128-bit LCG), with numpy's 32-bit buffering. */
export class NumpyGenerator {
  private state = 0n;
  private readonly inc: bigint;
  private buffered: number | null = null;

  constructor(seed: number) {
    const w = seedSequenceState(seed, 8);
    // generate_state(4, uint64): little-endian pairs of words; seed = (v0 high, v1 low), inc = (v2, v3).
    const u64 = (k: number): bigint => (BigInt(w[2 * k + 1]) << 32n) | BigInt(w[2 * k]);
    const initState = (u64(0) << 64n) | u64(1);
    const initSeq = (u64(2) << 64n) | u64(3);
    this.inc = ((initSeq << 1n) | 1n) & M128;
    this.step();
    this.state = (this.state + initState) & M128;
    this.step();
  }

  private step(): void {
    this.state = (this.state * PCG_MULT + this.inc) & M128;
  }

  next64(): bigint {
    this.step();
    const s = this.state;
    const x = ((s >> 64n) ^ s) & M64;
    const rot = s >> 122n;
    return ((x >> rot) | (x << ((64n - rot) & 63n))) & M64;
  }

  next32(): number {
    if (this.buffered !== null) {
      const v = this.buffered;
      this.buffered = null;
      return v;
    }
    const v = this.next64();
    this.buffered = Number(v >> 32n);
    return Number(v & M32);
  }

  /** `random_interval(max)`: a uniform integer in [0, max] by masked rejection. */
  interval(max: number): number {
    if (max === 0) return 0;
    if (max > 0xffffffff) throw new Error('interval above 2^32 is not needed here');
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let value: number;
    do value = (this.next32() & mask) >>> 0;
    while (value > max);
    return value;
  }

  /** `Generator.permutation(n)`: arange(n) shuffled (Fisher-Yates from the end). */
  permutation(n: number): number[] {
    const x = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = this.interval(i);
      [x[i], x[j]] = [x[j], x[i]];
    }
    return x;
  }
}
