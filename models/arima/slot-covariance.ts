import type { TransitionRows } from './state-space.ts';

/**
 * The filter's covariance, stored by physical slots with a state -> slot map (kalman.ts): a
 * shift of the state only relabels slots, and only the rows of T that are not shifts are
 * computed. Covariances are symmetric; only the lower triangle in slot order is stored.
 */

/** M = Pn Z': the columns of states 0 and r + k of the (slot-stored) predicted covariance. */
export function predictionCovariance(P: Float64Array, slot: Int32Array, dI: Int32Array, dV: Float64Array, rd: number, M: Float64Array): void {
  const nd = dI.length;
  const s0 = slot[0];
  for (let i = 0; i < rd; i++) {
    const si = slot[i];
    let tmp = si >= s0 ? P[si * rd + s0] : P[s0 * rd + si];
    for (let t = 0; t < nd; t++) {
      const c = slot[dI[t]];
      tmp += (si >= c ? P[si * rd + c] : P[c * rd + si]) * dV[t];
    }
    M[i] = tmp;
  }
}

/** P -= M K' over the stored lower triangle (unrolled: this is the filter's innermost loop). */
export function rankOneUpdate(P: Float64Array, M: Float64Array, K: Float64Array, rd: number): void {
  for (let i = 0; i < rd; i++) {
    const mi = M[i];
    const row = i * rd;
    let j = 0;
    for (; j + 3 <= i; j += 4) {
      P[row + j] -= mi * K[j];
      P[row + j + 1] -= mi * K[j + 1];
      P[row + j + 2] -= mi * K[j + 2];
      P[row + j + 3] -= mi * K[j + 3];
    }
    for (; j <= i; j++) P[row + j] -= mi * K[j];
  }
}

/**
 * P -= M M' / gain while the differencing states are still diffuse: entries of size kappa
 * cancel, so round as (M_i M_j) / gain, the textbook order.
 */
export function diffuseUpdate(P: Float64Array, M: Float64Array, gain: number, rd: number): void {
  for (let i = 0; i < rd; i++) {
    const mi = M[i];
    const row = i * rd;
    for (let j = 0; j <= i; j++) P[row + j] -= (mi * M[j]) / gain;
  }
}

/** P <- T P T' + R R' in place, computing only the states that are not a relabelled shift. */
export function predictCovariance(
  P: Float64Array,
  mm: Float64Array,
  slot: Int32Array,
  next: Int32Array,
  used: Uint8Array,
  T: TransitionRows,
  fresh: Int32Array,
  Rv: Float64Array,
  rd: number,
): void {
  const { kind, src, start, cols, vals, general } = T;
  const ng = general.length;
  const nf = fresh.length;
  const q = Rv.length - 1;
  // Rows of T P (over slots) for the general rows, from the old covariance.
  for (let g = 0; g < ng; g++) {
    const i = general[g];
    const row = g * rd;
    for (let c = 0; c < rd; c++) mm[row + c] = 0;
    for (let e = start[i]; e < start[i + 1]; e++) {
      const v = vals[e];
      const k = slot[cols[e]];
      const rk = k * rd;
      for (let c = 0; c <= k; c++) mm[row + c] += v * P[rk + c];
      for (let c = k + 1; c < rd; c++) mm[row + c] += v * P[c * rd + k];
    }
  }
  // Relabel: a shifted state keeps its source's slot; freed slots go to the fresh states.
  used.fill(0);
  for (let i = 0; i < rd; i++) {
    if (kind[i] === 1) {
      const sl = slot[src[i]];
      next[i] = sl;
      used[sl] = 1;
    }
  }
  let freeSlot = 0;
  for (let f = 0; f < nf; f++) {
    while (used[freeSlot]) freeSlot++;
    next[fresh[f]] = freeSlot;
    used[freeSlot] = 1;
  }
  // Rows of the fresh states: general rows from T P, zero rows zero.
  let g = 0;
  for (let f = 0; f < nf; f++) {
    const i = fresh[f];
    const si = next[i];
    if (kind[i] === 0) {
      for (let c = 0; c <= si; c++) P[si * rd + c] = 0;
      for (let c = si + 1; c < rd; c++) P[c * rd + si] = 0;
      continue;
    }
    while (general[g] !== i) g++;
    const row = g * rd;
    for (let j = 0; j < rd; j++) {
      const kj = kind[j];
      if (kj === 0 || (kj === 2 && j > i)) continue; // zero, or written from row j's side
      let v = 0;
      if (kj === 1) v = mm[row + next[j]];
      else for (let e = start[j]; e < start[j + 1]; e++) v += vals[e] * mm[row + slot[cols[e]]];
      const sj = next[j];
      if (si >= sj) P[si * rd + sj] = v;
      else P[sj * rd + si] = v;
    }
  }
  slot.set(next);
  // + R R' on the states 0..q.
  for (let i = 0; i <= q; i++) {
    const si = slot[i];
    for (let j = 0; j <= i; j++) {
      const sj = slot[j];
      const v = Rv[i] * Rv[j];
      if (si >= sj) P[si * rd + sj] += v;
      else P[sj * rd + si] += v;
    }
  }
}

/** Lower triangle of P in state order. */
export function exportLower(P: Float64Array, slot: Int32Array, rd: number, dst: Float64Array): void {
  for (let i = 0; i < rd; i++) {
    const si = slot[i];
    for (let j = 0; j <= i; j++) {
      const sj = slot[j];
      dst[i * rd + j] = si >= sj ? P[si * rd + sj] : P[sj * rd + si];
    }
  }
}

/**
 * Largest change of P since the snapshot, relative to the larger of its diagonal and the
 * gain (the predicted covariance is at least R R', gain >= 1: it sets the scale when P -> 0).
 */
export function changeSinceSnapshot(P: Float64Array, slot: Int32Array, rd: number, snap: Float64Array, gain: number): number {
  let change = 0;
  let size = gain;
  for (let i = 0; i < rd; i++) {
    const si = slot[i];
    for (let j = 0; j <= i; j++) {
      const sj = slot[j];
      const v = si >= sj ? P[si * rd + sj] : P[sj * rd + si];
      const dv = Math.abs(v - snap[i * rd + j]);
      if (dv > change) change = dv;
      if (i === j && Math.abs(v) > size) size = Math.abs(v);
    }
  }
  return change / size;
}
