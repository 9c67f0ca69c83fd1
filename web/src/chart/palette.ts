/**
 * The fan chart's colours, in one place: the chart draws with them and the browser tests look
 * for them in what was drawn.
 */
export const HISTORY_COLOR = '#374151';
export const ACTUAL_COLOR = '#dc2626';
/** One colour per forecast creation date when several are overlaid (the first for a single one). */
export const FORECAST_COLORS = ['#2563eb', '#059669', '#d97706', '#7c3aed', '#db2777', '#0891b2'];

/** Opacity of the k-th quantile band from the outside in: inner bands, drawn over outer ones, look darker. */
export const bandAlpha = (k: number): number => 0.16 + 0.1 * k;

export function rgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

export function rgba(hex: string, alpha: number): string {
  return `rgba(${rgb(hex).join(',')},${alpha})`;
}

/** What a colour at an opacity looks like over the chart's white background. */
export function overWhite(hex: string, alpha: number): [number, number, number] {
  return rgb(hex).map((c) => Math.round(255 * (1 - alpha) + c * alpha)) as [number, number, number];
}
