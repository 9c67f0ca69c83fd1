import type { Command } from 'commander';
import type { ClientConfig } from '../../config.ts';
import { EXIT } from './errors.ts';
import { clientFor, positiveInteger, positiveNumber } from './options.ts';
import { fetchJobStatus, waitForJob, type JobStatus } from './progress.ts';
import { table } from './table.ts';

/** GET /forecast-jobs: one entry per job of the caller, newest first. */
interface ListedJob {
  job_id: string;
  kind: 'forecast' | 'beta';
  model: string;
  created_at: string;
  series: number | null;
  forecasts: number | null;
  status: JobStatus['status'];
  progress?: JobStatus['progress'];
  error?: JobStatus['error'];
}

/** `40/120 (33%)`, `completed`, `failed: cancelled`. */
function stateText(job: Pick<JobStatus, 'status' | 'progress' | 'error'>): string {
  if (job.status === 'failed') return `failed (${job.error?.code ?? 'unknown'})`;
  if (job.status === 'completed' || !job.progress?.total) return job.status;
  const { done, total } = job.progress;
  return `in_progress ${done}/${total} (${Math.floor((100 * done) / total)}%)`;
}

function printStatus(status: JobStatus): void {
  const lines = [`job ${status.job_id}: ${status.status === 'failed' ? stateText(status) : status.status}`];
  const progress = status.progress;
  if (status.status === 'in_progress' && progress?.total)
    lines.push(
      `  ${progress.done} of ${progress.total} forecasts done (${Math.floor((100 * progress.done) / progress.total)}%), ${progress.chunksDone} of ${progress.chunks ?? '?'} chunks`,
    );
  if (status.status === 'in_progress' && !progress) lines.push('  no progress yet: no worker answered in time (all busy, or none running)');
  if (status.status === 'completed')
    lines.push(`  ${status.total_series ?? '?'} series; results: forecast download ${status.job_id} [--input FILE] [--out DIR]`);
  if (status.status === 'failed' && status.error) lines.push(`  ${status.error.message}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `forecast jobs`, `forecast status ID [--wait]`, `forecast cancel ID`. */
export function jobCommands(program: Command, config: ClientConfig): void {
  program
    .command('jobs')
    .description('list your jobs, newest first')
    .option('--limit <n>', 'at most this many', positiveInteger, 100)
    .option('--json', "print the service's answer as JSON")
    .action(async (options: { limit: number; json?: boolean }, self: Command) => {
      const { jobs } = await clientFor(self, config).json<{ jobs: ListedJob[] }>('GET', `/forecast-jobs?limit=${options.limit}`);
      if (options.json) return void process.stdout.write(`${JSON.stringify(jobs, null, 2)}\n`);
      if (jobs.length === 0) return void process.stdout.write('no jobs\n');
      const header = ['JOB ID', 'KIND', 'MODEL', 'CREATED', 'SERIES', 'FORECASTS', 'STATUS'];
      const rows = jobs.map((j) => [j.job_id, j.kind, j.model, j.created_at, String(j.series ?? '-'), String(j.forecasts ?? '-'), stateText(j)]);
      process.stdout.write(`${table([header, ...rows])}\n`);
    });

  program
    .command('status')
    .description("a job's state and progress (exit 1 when it failed)")
    .argument('<job_id>')
    .option('--wait', 'wait until it has finished, showing its progress')
    .option('--interval <seconds>', 'seconds between progress checks', positiveNumber, 1)
    .option('--json', 'print the state as JSON')
    .action(async (jobId: string, options: { wait?: boolean; interval: number; json?: boolean }, self: Command) => {
      const client = clientFor(self, config);
      const status = options.wait
        ? await waitForJob(client, jobId, { intervalMs: options.interval * 1000, stream: process.stderr })
        : await fetchJobStatus(client, jobId);
      const { job_id, status: state, progress, error, total_series } = status;
      if (options.json) process.stdout.write(`${JSON.stringify({ job_id, status: state, progress, error, total_series }, null, 2)}\n`);
      else printStatus(status);
      if (state === 'failed') process.exitCode = EXIT.failed;
    });

  program
    .command('cancel')
    .description('cancel a running job (it ends failed, with code cancelled)')
    .argument('<job_id>')
    .action(async (jobId: string, _options: unknown, self: Command) => {
      await clientFor(self, config).json('POST', `/forecast-jobs/${encodeURIComponent(jobId)}/cancel`);
      process.stdout.write(`cancelling job ${jobId}\n`);
    });
}
