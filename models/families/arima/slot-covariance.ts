import type { TransitionRows } from './arima-state-space.ts';

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

/**
 * P <- T P T' + R R' in place, computing only the states that are not a relabelled shift: the
 * rows of T P for the general rows of T, then the fresh states' rows of T P T' from them. Only
 * the non-zero entries of R enter R R'.
 */
export function predictCovariance(P: Float64Array, mm: Float64Array, slot: Int32Array, next: Int32Array, T: TransitionRows, rd: number): void {
  const { kind, src, start, cols, vals, general, ng, shifts, ns, fresh, nf, freed, rIdx, rVal, nr } = T;
  // Rows of T P (over slots) for the general rows, from the old covariance.
  for (let g = 0; g < ng; g++) {
    const i = general[g];
    const row = g * rd;
    const e0 = start[i];
    const e1 = start[i + 1];
    for (let e = e0; e < e1; e++) {
      const v = vals[e];
      const k = slot[cols[e]];
      const rk = k * rd;
      if (e === e0) {
        for (let c = 0; c <= k; c++) mm[row + c] = 0 + v * P[rk + c];
        for (let c = k + 1; c < rd; c++) mm[row + c] = 0 + v * P[c * rd + k];
      } else {
        for (let c = 0; c <= k; c++) mm[row + c] += v * P[rk + c];
        for (let c = k + 1; c < rd; c++) mm[row + c] += v * P[c * rd + k];
      }
    }
  }
  // Relabel: a shifted state keeps its source's slot; the slots of the states no shift reads go
  // to the fresh states.
  for (let s = 0; s < ns; s++) {
    const i = shifts[s];
    next[i] = slot[src[i]];
  }
  for (let f = 0; f < nf; f++) next[fresh[f]] = slot[freed[f]];
  // Rows of the fresh states: general rows from T P, zero rows zero.
  let g = 0;
  for (let f = 0; f < nf; f++) {
    const i = fresh[f];
    const si = next[i];
    const rsi = si * rd;
    if (kind[i] === 0) {
      for (let c = 0; c <= si; c++) P[rsi + c] = 0;
      for (let c = si + 1; c < rd; c++) P[c * rd + si] = 0;
      continue;
    }
    while (general[g] !== i) g++;
    const row = g * rd;
    for (let s = 0; s < ns; s++) {
      const sj = next[shifts[s]];
      const v = mm[row + sj];
      if (si >= sj) P[rsi + sj] = v;
      else P[sj * rd + si] = v;
    }
    // General rows j <= i (a later one writes the pair from its own side).
    for (let h = 0; h < ng; h++) {
      const j = general[h];
      if (j > i) break;
      let v = 0;
      for (let e = start[j]; e < start[j + 1]; e++) v += vals[e] * mm[row + slot[cols[e]]];
      const sj = next[j];
      if (si >= sj) P[rsi + sj] = v;
      else P[sj * rd + si] = v;
    }
  }
  for (let i = 0; i < rd; i++) slot[i] = next[i];
  // + R R' on the non-zero entries of R.
  for (let a = 0; a < nr; a++) {
    const si = slot[rIdx[a]];
    const ra = rVal[a];
    for (let b = 0; b <= a; b++) {
      const sj = slot[rIdx[b]];
      const v = ra * rVal[b];
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
 * Whether P moved by at most tol since the snapshot (snap: a copy of the stored P when the
 * state -> slot map was snapSlot), relative to the larger of its diagonal and the gain (the
 * predicted covariance is at least R R', gain >= 1: it sets the scale when P -> 0): the largest
 * change over the lower triangle divided by that scale, compared with tol. An entry that moved
 * more settles it at once; only a covariance that has about converged is scanned in full.
 */
export function settled(P: Float64Array, slot: Int32Array, snap: Float64Array, snapSlot: Int32Array, rd: number, gain: number, tol: number): boolean {
  let size = gain;
  for (let i = 0; i < rd; i++) {
    const v = Math.abs(P[slot[i] * (rd + 1)]);
    if (v > size) size = v;
  }
  // Division by a finite size > 0 keeps order: (largest dv) / size is the largest dv / size, so
  // one entry above tol settles it, and none settles it the other way.
  if (size > 0 && size < Infinity) {
    for (let i = 0; i < rd; i++) {
      const si = slot[i];
      const ti = snapSlot[i];
      for (let j = 0; j <= i; j++) {
        const sj = slot[j];
        const tj = snapSlot[j];
        const v = si >= sj ? P[si * rd + sj] : P[sj * rd + si];
        const w = ti >= tj ? snap[ti * rd + tj] : snap[tj * rd + ti];
        if (Math.abs(v - w) / size > tol) return false;
      }
    }
    return true;
  }
  let change = 0;
  for (let i = 0; i < rd; i++) {
    const si = slot[i];
    const ti = snapSlot[i];
    for (let j = 0; j <= i; j++) {
      const sj = slot[j];
      const tj = snapSlot[j];
      const v = si >= sj ? P[si * rd + sj] : P[sj * rd + si];
      const w = ti >= tj ? snap[ti * rd + tj] : snap[tj * rd + ti];
      const dv = Math.abs(v - w);
      if (dv > change) change = dv;
    }
  }
  return change / size <= tol;
}
