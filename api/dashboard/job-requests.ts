import { createHash } from 'node:crypto';
import type { ForecastRequest } from '../../engine/request-schema.ts';
import type { JobStore } from '../../store/job-store.ts';

/** Requests kept in memory: a series browser reads one job's series after another. */
const REQUESTS_KEPT = 2;
/** Fingerprints are small and a job's request never changes: many are kept. */
const FINGERPRINTS_KEPT = 5_000;

/**
 * Forecast jobs' stored requests, for the dashboard's reads: the request itself (the series'
 * history), and a fingerprint of the data it forecasts, by which two jobs are found comparable.
 */
export class JobRequests {
  private readonly requests = new Map<string, Promise<ForecastRequest>>();
  private readonly fingerprints = new Map<string, string>();

  constructor(private readonly store: JobStore) {}

  request(jobId: string): Promise<ForecastRequest> {
    const kept = this.requests.get(jobId);
    if (kept) return kept;
    const reading = this.store.request(jobId);
    reading.catch(() => this.requests.delete(jobId));
    remember(this.requests, jobId, reading, REQUESTS_KEPT);
    return reading;
  }

  /**
   * What the job forecasts, as a hash: every series' values, index, creation dates and role, the
   * horizon and the frequency. The model and its settings are left out (they are what a
   * leaderboard compares); so are covariates, which are inputs of a model like its settings.
   */
  async fingerprint(jobId: string): Promise<string> {
    const kept = this.fingerprints.get(jobId);
    if (kept) return kept;
    const request = await this.store.request(jobId);
    const data = [request.series.map((s) => [s.target, s.index, s.fcds, s.only_as_context]), request.horizon, request.freq];
    const hash = createHash('sha256').update(JSON.stringify(data)).digest('hex');
    remember(this.fingerprints, jobId, hash, FINGERPRINTS_KEPT);
    return hash;
  }
}

/** Map insertion order as recency: the oldest entry goes once the map is full. */
function remember<V>(map: Map<string, V>, key: string, value: V, size: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > size) map.delete(map.keys().next().value!);
}
