import cliProgress from 'cli-progress';
import { NetworkError, type ApiClient } from './client.ts';
import { ApiError, EXIT } from './errors.ts';

/** GET /forecast-jobs/{id} (reference 4.3), the fields the CLI reads. */
export interface JobStatus {
  job_id: string;
  status: 'in_progress' | 'completed' | 'failed';
  progress?: { done: number; total: number | null; chunksDone: number; chunks: number | null } | null;
  error?: { code: string; message: string };
  total_series?: number;
}

/** A job's state without its results: a completed job's answer carries series, so one page of one is asked for. */
export async function fetchJobStatus(client: ApiClient, jobId: string): Promise<JobStatus> {
  const path = `/forecast-jobs/${encodeURIComponent(jobId)}?limit=1`;
  const status = await client.json<JobStatus>('GET', path);
  if (!JOB_STATES.has(status.status)) throw client.notTheService(`GET ${path}`, 'a body without a job status');
  return status;
}

const JOB_STATES = new Set<unknown>(['in_progress', 'completed', 'failed']);

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'unknown';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Forecasts per second since the first sample, and the time the rest would take at that rate. */
class RateMeter {
  private first: { at: number; done: number } | undefined;

  sample(done: number, total: number): { rate: number; secondsLeft: number } {
    const now = Date.now();
    this.first ??= { at: now, done };
    const elapsed = (now - this.first.at) / 1000;
    const rate = elapsed > 0 ? (done - this.first.done) / elapsed : 0;
    return { rate, secondsLeft: rate > 0 ? (total - done) / rate : Infinity };
  }
}

interface ProgressView {
  update(done: number, total: number): void;
  stop(final: JobStatus): void;
}

/** `about 3 min 2 s left`, or that it cannot be told yet (nothing done since the first look). */
const timeLeft = (seconds: number): string => (Number.isFinite(seconds) ? `about ${formatDuration(seconds)} left` : 'time left unknown');

/** A terminal: a bar redrawn in place (cli-progress), with forecasts done, rate and time left. */
function barView(stream: NodeJS.WriteStream): ProgressView {
  const bar = new cliProgress.SingleBar(
    {
      format: ' {bar} {percentage}% | {value}/{total} forecasts | {rate} forecasts/s | {left}',
      stream,
      hideCursor: true,
      barsize: 30,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const meter = new RateMeter();
  let started = false;
  return {
    update(done, total) {
      const { rate, secondsLeft } = meter.sample(done, total);
      const payload = { rate: rate > 0 ? rate.toFixed(1) : '-', left: timeLeft(secondsLeft) };
      if (!started) bar.start(total, done, payload);
      else {
        bar.setTotal(total);
        bar.update(done, payload);
      }
      started = true;
    },
    stop(final) {
      if (!started) return;
      if (final.status === 'completed') {
        const { rate } = meter.sample(bar.getTotal(), bar.getTotal());
        bar.update(bar.getTotal(), { rate: rate > 0 ? rate.toFixed(1) : '-', left: 'done' });
      }
      bar.stop();
    },
  };
}

/** A line at least this often even when nothing moved, so that a log shows the wait goes on (a job queued behind others). */
const QUIET_LINE_MS = 30_000;

/** Not a terminal (a log, a pipe, CI): a plain line whenever the count moved, at most every `everyMs`. */
function lineView(stream: NodeJS.WritableStream, everyMs: number): ProgressView {
  const meter = new RateMeter();
  const startedAt = Date.now();
  let last: { at: number; done: number } | undefined;
  return {
    update(done, total) {
      const { rate, secondsLeft } = meter.sample(done, total);
      const now = Date.now();
      if (last && now - last.at < QUIET_LINE_MS && (done === last.done || now - last.at < everyMs)) return;
      last = { at: now, done };
      const percent = total > 0 ? Math.floor((100 * done) / total) : 0;
      const speed = rate > 0 ? `, ${rate.toFixed(1)} forecasts/s, ${timeLeft(secondsLeft)}` : '';
      stream.write(`progress: ${done}/${total} forecasts (${percent}%)${speed}\n`);
    },
    stop(final) {
      if (final.status === 'completed') stream.write(`progress: done in ${formatDuration((Date.now() - startedAt) / 1000)}\n`);
    },
  };
}

/** How long a wait goes on while the service cannot be reached or answers 502-504. */
const LOST_CONTACT_LIMIT_MS = 5 * 60_000;

const isTransient = (error: unknown): boolean => error instanceof NetworkError || (error instanceof ApiError && [502, 503, 504].includes(error.status));

export interface WaitOptions {
  intervalMs: number;
  /** Where progress goes (stderr, so that stdout stays the command's result). */
  stream: NodeJS.WriteStream;
  /** The forecasts the job makes, when known before its first progress answer. */
  forecasts?: number;
  /** The file the job was submitted from, for the hint on how to download its results later. */
  input?: string;
}

/**
 * Polls a job until it has finished, showing its progress; Ctrl-C stops waiting (the job goes
 * on) and says how to pick it up again.
 */
export async function waitForJob(client: ApiClient, jobId: string, options: WaitOptions): Promise<JobStatus> {
  const view = options.stream.isTTY ? barView(options.stream) : lineView(options.stream, 2_000);
  const interrupted = () => {
    view.stop({ job_id: jobId, status: 'in_progress' });
    options.stream.write(
      `\nstopped waiting; job ${jobId} goes on. Follow it with \`forecast status ${jobId} --wait\`, fetch its results with \`forecast download ${jobId}${options.input ? ` --input ${options.input}` : ''}\`\n`,
    );
    process.exit(EXIT.interrupted);
  };
  process.once('SIGINT', interrupted);
  let lostSince: number | undefined;
  try {
    for (;;) {
      let status: JobStatus;
      try {
        status = await fetchJobStatus(client, jobId);
        lostSince = undefined;
      } catch (error) {
        // A service restarting (a deploy, a graceful shutdown) should not end a long wait.
        if (!isTransient(error) || (lostSince !== undefined && Date.now() - lostSince > LOST_CONTACT_LIMIT_MS)) {
          view.stop({ job_id: jobId, status: 'in_progress' });
          throw error;
        }
        if (lostSince === undefined) {
          options.stream.write(
            `${options.stream.isTTY ? '\n' : ''}lost contact with the service (${(error as Error).message}); trying again for up to ${formatDuration(LOST_CONTACT_LIMIT_MS / 1000)}\n`,
          );
        }
        lostSince ??= Date.now();
        await new Promise((resolve) => setTimeout(resolve, Math.max(options.intervalMs, 2_000)));
        continue;
      }
      if (status.status !== 'in_progress') {
        view.stop(status);
        return status;
      }
      const total = status.progress?.total ?? options.forecasts;
      if (total) view.update(status.progress?.done ?? 0, total);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  } finally {
    process.removeListener('SIGINT', interrupted);
  }
}
