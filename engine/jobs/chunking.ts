import { creationDates } from '../plan.ts';
import type { ForecastRequest, InputSerie } from '../request-schema.ts';

/** One activity's share of a job: some series, each with some of its forecast creation dates. */
export interface Chunk {
  /** Position of each chunk series in the job's request. */
  seriesIndex: number[];
  /** For each chunk series, positions of its forecast creation dates in the request's `fcds`. */
  fcdPositions: number[][];
  /** A request of its own: the same settings, the chunk's series with only their chunk's fcds. */
  request: ForecastRequest;
  /**
   * Under a refit policy, each chunk series' creation dates in the whole request: which dates are
   * refitted depends on all of them, not on the chunk's share.
   */
  refitFcds?: number[][];
}

/** Temporal's history grows with every activity; capping chunks keeps a job far below its limits. */
export const MAX_CHUNKS = 2000;

/**
 * (series x creation date) pairs per chunk, for both kinds of job: at least `minimum`, about 64
 * chunks per job (enough to spread over many workers' threads, few enough that each chunk's fixed
 * costs, a few store round trips and Temporal's scheduling, stay small next to a cheap model's
 * work), never more than 20,000 pairs (what a retry redoes), and never over MAX_CHUNKS chunks.
 */
export function forecastsPerChunk(total: number, minimum: number): number {
  return Math.max(minimum, Math.min(Math.ceil(total / 64), 20_000), Math.ceil(total / MAX_CHUNKS));
}

/**
 * Splits a job into chunks of `forecastsPerChunk(total, minimum)` (series x forecast creation
 * date) pairs, in request order. A series with more dates than a chunk holds is split across chunks.
 * `only_as_context` series are not forecast and belong to no chunk. When the model couples the
 * request's series (a global model learning across them, plan.ts `seriesAreCoupled`), the job
 * is one chunk: the request itself.
 */
export function splitIntoChunks(request: ForecastRequest, minimum: number, coupled = false): Chunk[] {
  if (coupled) {
    const seriesIndex = request.series.map((_, i) => i);
    // Whole series: the chunk's dates are all of them, refit policy or not.
    return [{ seriesIndex, fcdPositions: request.series.map((s) => (s.only_as_context ? [] : creationDates(s).map((_, j) => j))), request }];
  }
  const pairs: [number, number][] = [];
  request.series.forEach((s, i) => {
    if (!s.only_as_context) creationDates(s).forEach((_, j) => pairs.push([i, j]));
  });
  const size = forecastsPerChunk(pairs.length, minimum);
  const chunks: Chunk[] = [];
  for (let start = 0; start < pairs.length; start += size) {
    const seriesIndex: number[] = [];
    const fcdPositions: number[][] = [];
    for (const [i, j] of pairs.slice(start, start + size)) {
      if (seriesIndex[seriesIndex.length - 1] !== i) {
        seriesIndex.push(i);
        fcdPositions.push([]);
      }
      fcdPositions[fcdPositions.length - 1].push(j);
    }
    const series: InputSerie[] = seriesIndex.map((i, c) => {
      const dates = creationDates(request.series[i]);
      return { ...request.series[i], fcds: fcdPositions[c].map((j) => dates[j]) };
    });
    const refitFcds = request.refit === 'every' ? undefined : seriesIndex.map((i) => creationDates(request.series[i]));
    chunks.push({ seriesIndex, fcdPositions, request: { ...request, series }, ...(refitFcds && { refitFcds }) });
  }
  return chunks;
}

export const countForecasts = (request: ForecastRequest): number => request.series.reduce((n, s) => n + (s.only_as_context ? 0 : creationDates(s).length), 0);
