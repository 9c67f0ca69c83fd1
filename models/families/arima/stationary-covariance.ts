/**
 * Stationary covariance Q0 of the ARMA block of the state vector (Gardner, Harvey & Phillips 1980,
 * algorithm AS 154, the "Gardner1980" initialisation of R's arima): the distinct entries of
 * Q0 = T Q0 T' + R R' solve a linear system, one equation per entry, by square-root-free Givens
 * rotations (Gentleman 1973) then back-substitution. Rows are kept sparse, and the unknowns ordered
 * as AS 154 does, so the arithmetic and its rounding are those of the dense algorithm (see Workspace).
 */

/**
 * Each equation has at most five non-zero coefficients, and for seasonal models nearly all of the
 * triangular factor stays zero, so only the positions where the equation or the factor row is
 * non-zero are visited. Skipping the others changes nothing, as every skipped update is 0 - x * 0
 * or c * 0 + s * 0. The unknowns are ordered as AS 154 does (first column of Q0 last).
 */
interface Workspace {
  np: number;
  /** Current equation (dense, zero outside the positions flagged in `bits`). */
  xrow: Float64Array;
  bits: Uint32Array;

  thetab: Float64Array;
  /** Diagonal of the factorisation; it becomes the solution vector. */
  dvec: Float64Array;
  V: Float64Array;
  /**
   * Rows of the unit upper-triangular factor, stored sparse: sorted column indices and their
   * values, each row in a slot of a growable pool.
   */
  patStart: Int32Array;
  patLen: Int32Array;
  patCap: Int32Array;
  pool: Int32Array;
  poolVals: Float64Array;
  poolUsed: number;
  /** Scratch for merging a row with the equation. */
  mergeA: Int32Array;
  mergeB: Int32Array;
  mergeVals: Float64Array;
  /**
   * The rotations the equations went through, in order (pivot, x_i, cbar, sbar), and where each
   * equation's end: all the right-hand sides see of the factorisation.
   */
  rotPivot: Int32Array;
  rotX: Float64Array;
  rotC: Float64Array;
  rotS: Float64Array;
  nRot: number;
  eqEnd: Int32Array;
  /** The AR coefficients (and r) the factorisation is for; r = 0 when there is none. */
  keyPhi: Float64Array;
  keyR: number;
  /** Scratch for the solution's last r entries while they move to the front. */
  tail: Float64Array;
}

let work: Workspace | null = null;

function workspace(np: number): Workspace {
  if (!work || work.np !== np) {
    work = {
      np,
      xrow: new Float64Array(np),
      bits: new Uint32Array((np + 31) >>> 5),
      thetab: new Float64Array(np),
      dvec: new Float64Array(np),
      V: new Float64Array(np),
      patStart: new Int32Array(np),
      patLen: new Int32Array(np),
      patCap: new Int32Array(np),
      pool: new Int32Array(Math.max(1024, 8 * np)),
      poolVals: new Float64Array(Math.max(1024, 8 * np)),
      poolUsed: 0,
      mergeA: new Int32Array(np),
      mergeB: new Int32Array(np),
      mergeVals: new Float64Array(np),
      rotPivot: new Int32Array(4 * np),
      rotX: new Float64Array(4 * np),
      rotC: new Float64Array(4 * np),
      rotS: new Float64Array(4 * np),
      nRot: 0,
      eqEnd: new Int32Array(np),
      keyPhi: new Float64Array(0),
      keyR: 0,
      tail: new Float64Array(np),
    };
  }
  return work;
}

function setBit(bits: Uint32Array, k: number): void {
  bits[k >>> 5] |= 1 << (k & 31);
}

/** Positions > from with their bit set, ascending, into out; returns the count. */
function collectBits(bits: Uint32Array, from: number, np: number, out: Int32Array): number {
  let n = 0;
  let k = from + 1;
  if (k >= np) return 0;
  let w = k >>> 5;
  let word = bits[w] & (~0 << (k & 31));
  const words = bits.length;
  for (;;) {
    while (word !== 0) {
      const b = 31 - Math.clz32(word & -word);
      const pos = (w << 5) + b;
      if (pos >= np) return n;
      out[n++] = pos;
      word &= word - 1;
    }
    if (++w >= words) return n;
    word = bits[w];
  }
}

/** Stores a factor row, moving it to the end of the pool when it outgrows its slot. */
function storeRow(ws: Workspace, row: number, cols: Int32Array, vals: Float64Array, n: number): void {
  if (n > ws.patCap[row]) {
    const cap = Math.max(8, n * 2);
    if (ws.poolUsed + cap > ws.pool.length) {
      const size = Math.max(ws.pool.length * 2, ws.poolUsed + cap);
      const grown = new Int32Array(size);
      grown.set(ws.pool.subarray(0, ws.poolUsed));
      ws.pool = grown;
      const grownVals = new Float64Array(size);
      grownVals.set(ws.poolVals.subarray(0, ws.poolUsed));
      ws.poolVals = grownVals;
    }
    ws.patStart[row] = ws.poolUsed;
    ws.patCap[row] = cap;
    ws.poolUsed += cap;
  }
  const { pool, poolVals } = ws;
  const at = ws.patStart[row];
  for (let k = 0; k < n; k++) {
    pool[at + k] = cols[k];
    poolVals[at + k] = vals[k];
  }
  ws.patLen[row] = n;
}

/**
 * Adds one equation (in ws.xrow / ws.bits, right-hand side y) to the factorisation, stopping at
 * the first empty pivot, which the equation then becomes.
 */
function includeEquation(ws: Workspace, y: number): void {
  const { np, xrow, bits, thetab, dvec, mergeA, mergeB, mergeVals } = ws;
  let i = -1;
  for (;;) {
    // Next non-zero position of the equation after i.
    if (i + 1 >= np) return;
    let w = (i + 1) >>> 5;
    let word = bits[w] & (~0 << ((i + 1) & 31));
    while (word === 0) {
      if (++w >= bits.length) return;
      word = bits[w];
    }
    i = (w << 5) + (31 - Math.clz32(word & -word));
    if (i >= np) return;
    const xi = xrow[i];
    if (xi === 0) continue;
    const di = dvec[i];
    const dpi = di + xi * xi;
    dvec[i] = dpi;
    const cbar = di / dpi;
    const sbar = xi / dpi;
    // Walk the union of the factor row's columns and the equation's later non-zeros, in order:
    // x_k -= x_i r_k and r_k = cbar r_k + sbar x_k (r_k = 0 where the row had no entry).
    const nb = collectBits(bits, i, np, mergeB);
    const pool = ws.pool;
    const vals = ws.poolVals;
    const ps = ws.patStart[i];
    const pl = ws.patLen[i];
    let a = 0;
    let b = 0;
    let nu = 0;
    while (a < pl || b < nb) {
      const ka = a < pl ? pool[ps + a] : np;
      const kb = b < nb ? mergeB[b] : np;
      if (ka <= kb) {
        const xk = xrow[ka];
        const rb = vals[ps + a];
        const nx = xk - xi * rb;
        xrow[ka] = nx;
        if (nx !== 0) setBit(bits, ka);
        mergeA[nu] = ka;
        mergeVals[nu++] = cbar * rb + sbar * xk;
        a++;
        if (ka === kb) b++;
      } else {
        mergeA[nu] = kb;
        mergeVals[nu++] = cbar * 0 + sbar * xrow[kb];
        b++;
      }
    }
    storeRow(ws, i, mergeA, mergeVals, nu);
    logRotation(ws, i, xi, cbar, sbar);
    const yk = y;
    y = yk - xi * thetab[i];
    thetab[i] = cbar * thetab[i] + sbar * yk;
    if (di === 0) return;
  }
}

function logRotation(ws: Workspace, i: number, x: number, c: number, s: number): void {
  let k = ws.nRot;
  if (k === ws.rotPivot.length) {
    const grow = <T extends Int32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as { new (n: number): T })(2 * a.length);
      b.set(a);
      return b;
    };
    ws.rotPivot = grow(ws.rotPivot);
    ws.rotX = grow(ws.rotX);
    ws.rotC = grow(ws.rotC);
    ws.rotS = grow(ws.rotS);
  }
  ws.rotPivot[k] = i;
  ws.rotX[k] = x;
  ws.rotC[k] = c;
  ws.rotS[k++] = s;
  ws.nRot = k;
}

/**
 * Runs a right-hand side through the logged rotations (what includeEquation does to y and
 * thetab, in the same order, so to the same rounding).
 */
function replayRotations(ws: Workspace, V: Float64Array): void {
  const { rotPivot, rotX, rotC, rotS, eqEnd, thetab, np } = ws;
  thetab.fill(0);
  let k = 0;
  for (let eq = 0; eq < np; eq++) {
    let y = V[eq];
    const end = eqEnd[eq];
    for (; k < end; k++) {
      const i = rotPivot[k];
      const yk = y;
      y = yk - rotX[k] * thetab[i];
      thetab[i] = rotC[k] * thetab[i] + rotS[k] * yk;
    }
  }
}

function sameAr(ws: Workspace, phi: Float64Array, r: number): boolean {
  if (ws.keyR !== r || ws.keyPhi.length !== phi.length) return false;
  for (let i = 0; i < phi.length; i++) if (ws.keyPhi[i] !== phi[i]) return false;
  return true;
}

/** Clears the equation vector (only its flagged positions are non-zero). */
function clearEquation(ws: Workspace): void {
  const { bits, xrow } = ws;
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w];
    while (word !== 0) {
      const b = 31 - Math.clz32(word & -word);
      xrow[(w << 5) + b] = 0;
      word &= word - 1;
    }
    bits[w] = 0;
  }
}

/**
 * Back-substitution through the factor, each row's terms subtracted from the last column down;
 * then the first column (stored last) moves to the front: packed column-major order again.
 */
function backSubstitute(ws: Workspace, res: Float64Array, r: number): void {
  const { np, thetab, pool, poolVals, patStart, patLen } = ws;
  for (let im = np - 1; im >= 0; im--) {
    let bi = thetab[im];
    const ps = patStart[im];
    for (let t = patLen[im] - 1; t >= 0; t--) bi -= poolVals[ps + t] * res[pool[ps + t]];
    res[im] = bi;
  }
  const npr = np - r;
  const tail = ws.tail;
  for (let i = 0; i < r; i++) tail[i] = res[npr + i];
  res.copyWithin(r, 0, npr);
  for (let i = 0; i < r; i++) res[i] = tail[i];
}

/**
 * Q0 (r x r, column-major into out; r = max(p, q + 1)) for AR coefficients phi, MA theta. The
 * factorisation of the last phi is kept: a call with the same phi and another theta (the
 * likelihood's finite differences in the MA coefficients) only replays its rotations.
 */
export function stationaryCovariance(phi: Float64Array, theta: Float64Array, out: Float64Array): void {
  const p = phi.length;
  const q = theta.length;
  const r = Math.max(p, q + 1);
  if (r === 1) {
    out[0] = p === 0 ? 1 : 1 / (1 - phi[0] * phi[0]);
    return;
  }
  const np = (r * (r + 1)) / 2;
  const ws = workspace(np);
  const { V } = ws;
  // Packed lower triangle of R R', column by column (column j, rows i >= j).
  const coefR = (k: number) => (k === 0 ? 1 : k - 1 < q ? theta[k - 1] : 0);
  let eq = 0;
  for (let j = 0; j < r; j++) {
    const vj = coefR(j);
    for (let i = j; i < r; i++) V[eq++] = coefR(i) * vj;
  }
  const res = out; // the first np entries hold the packed solution
  if (p > 0 && sameAr(ws, phi, r)) {
    // The factorisation depends on phi only: for another theta, only the right-hand side moves.
    replayRotations(ws, V);
    backSubstitute(ws, res, r);
  } else if (p > 0) {
    const { xrow, bits, thetab, dvec } = ws;
    ws.keyR = 0;
    ws.nRot = 0;
    dvec.fill(0);
    thetab.fill(0);
    xrow.fill(0);
    bits.fill(0);
    ws.patLen.fill(0);
    ws.patCap.fill(0);
    ws.poolUsed = 0;
    // Unknown positions: entries (i, j) with i >= j >= 1 first, in packed order, then the first
    // column (i, 0) at npr + i. The equation of entry (i, j) reads
    //   Q(i,j) - phi_i phi_j Q(0,0) - phi_i Q(0,j+1) - phi_j Q(i+1,0) - Q(i+1,j+1) = V(i,j).
    const npr = np - r;
    const add = (k: number, v: number) => {
      xrow[k] += v;
      setBit(bits, k);
    };
    eq = 0;
    let inner = -1; // packed position of Q(i + 1, j + 1)
    let self = npr - 1; // position of Q(i, j)
    for (let j = 0; j < r; j++) {
      const phij = j < p ? phi[j] : 0;
      const colJ = npr + j + 1; // Q(0, j + 1)
      let colI = npr + 1 + j; // Q(i + 1, 0)
      for (let i = j; i < r; i++) {
        const y = V[eq++];
        const phii = i < p ? phi[i] : 0;
        if (++self >= np) self = 0;
        // Same accumulation order as the dense construction: -phi_i, then -phi_j, then the
        // Q(0,0) coefficient (which overwrites), then +1 for the entry itself.
        const hasJ = j !== r - 1;
        const hasI = hasJ && i !== r - 1;
        if (hasJ) add(colJ, -phii);
        if (hasI) {
          add(colI, -phij);
          add(++inner, -1);
        }
        xrow[npr] = -phii * phij;
        setBit(bits, npr);
        add(self, 1);
        includeEquation(ws, y);
        ws.eqEnd[eq - 1] = ws.nRot;
        clearEquation(ws);
        if (hasI) colI++;
      }
    }
    if (ws.keyPhi.length !== p) ws.keyPhi = new Float64Array(p);
    ws.keyPhi.set(phi);
    ws.keyR = r;
    backSubstitute(ws, res, r);
  } else {
    // Pure MA: Q(i, j) = V(i, j) + Q(i + 1, j + 1), filled from the bottom-right corner.
    let indn = np;
    let k = np;
    for (let i = 0; i < r; i++) {
      for (let j = 0; j <= i; j++) {
        --k;
        res[k] = V[k];
        if (j !== 0) res[k] += res[--indn];
      }
    }
  }
  // Unpack the lower triangle in place (from the end, so nothing is overwritten early), mirror it.
  let k = np;
  for (let i = r - 1; i > 0; i--) for (let j = r - 1; j >= i; j--) out[r * i + j] = res[--k];
  for (let i = 0; i < r - 1; i++) for (let j = i + 1; j < r; j++) out[i + r * j] = out[j + r * i];
}
