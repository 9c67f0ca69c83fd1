import type { Summary } from './scoring.ts';

/** The accuracy benchmark's plain-text tables. */

/** Targets of our models against each peer's counterpart: MASE ratio and time ratio at most these. */
export const PEER_TARGETS: Readonly<Record<string, { mase: number; time: number }>> = {
  R: { mase: 1.02, time: 0.5 },
  // Issue 12: at statsforecast's MASE or better, at no more of its time per series.
  statsforecast: { mase: 1, time: 1 },
};

export function ordinal(k: number): string {
  const tens = k % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][k % 10] ?? 'th');
  return `${k}${suffix}`;
}

export function fmt(x: number, digits: number): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '-';
}

export function fmtMs(x: number): string {
  if (!Number.isFinite(x)) return '-';
  if (x < 1) return x.toFixed(3);
  if (x < 100) return x.toFixed(2);
  return x.toFixed(0);
}

export function fmtCrps(x: number): string {
  if (!Number.isFinite(x)) return '-';
  return Math.abs(x) >= 1000 ? x.toFixed(1) : x.toPrecision(5);
}

/**
 * Plain-text table, first column(s) left-aligned, the rest right-aligned. A row shorter than the
 * header is a note: its last cell runs on freely instead of widening its column.
 */
export function table(header: string[], rows: string[][], leftColumns = 1): string {
  const full = (r: string[]) => r.length === header.length;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (full(r) || i < r.length - 1 ? (r[i] ?? '').length : 0))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (!full(cells) && i === cells.length - 1 ? c : i < leftColumns ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function scoreRow(s: Summary): string[] {
  const failed = s.failed > 0 ? `${s.failed}*` : '0';
  const maseCell = fmt(s.mase, 3) + (s.maseUndefined > 0 ? ` (${s.maseUndefined} undef.)` : '');
  return [
    s.label,
    String(s.series),
    failed,
    fmt(s.smape, 3),
    maseCell,
    fmtCrps(s.crps),
    fmt(s.coverage80, 3),
    fmtMs(s.msMean),
    fmtMs(s.msMedian),
    fmtMs(s.cpuMsMean),
  ];
}

export function ratioRow(
  ours: string,
  peer: string,
  mine: Summary | string | undefined,
  ref: Summary | undefined,
  target: { mase: number; time: number },
): string[] {
  if (typeof mine === 'string') return [`${ours} / ${peer}`, mine];
  if (!mine) return [`${ours} / ${peer}`, 'not run (not in --models)'];
  if (!ref) return [`${ours} / ${peer}`, 'no reference (skipped or unavailable)'];
  const maseRatio = mine.mase / ref.mase;
  const timeRatio = mine.msMean / ref.msMean;
  // A tie passes: identical forecasts give a ratio a rounding error away from 1.
  const verdict = (x: number, limit: number) => `${fmt(x, 3)} ${x <= limit * (1 + 1e-9) ? 'PASS' : 'FAIL'}`;
  return [
    `${ours} / ${peer}`,
    verdict(maseRatio, target.mase),
    verdict(timeRatio, target.time),
    fmt(mine.smape / ref.smape, 3),
    fmt(mine.crps / ref.crps, 3),
    fmt(mine.cpuMsMean / ref.cpuMsMean, 3),
    fmt(ref.msMean / mine.msMean, 1) + 'x',
  ];
}
