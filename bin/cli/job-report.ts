import type { ApiClient } from './client.ts';
import { CliError } from './errors.ts';
import type { JobStatus } from './progress.ts';
import { downloadResults } from './results.ts';

export interface JobEndOptions {
  outDir: string;
  /** The series' unique_ids in request order, when the input file is known. */
  ids: readonly string[] | null;
  /** That file, to say how to download again. */
  input?: string;
}

/** The service names series by position (`series 3 at ...`); the caller knows them by unique_id. */
function withSeriesIds(message: string, ids: readonly string[] | null): string {
  if (!ids) return message;
  return message.replace(/\bseries (\d+)\b/g, (text, index: string) => (ids[Number(index)] === undefined ? text : `${text} ('${ids[Number(index)]}')`));
}

/** A finished job: its results downloaded and their paths printed, or its failure reported (exit 1). */
export async function reportJobEnd(client: ApiClient, status: JobStatus, options: JobEndOptions): Promise<void> {
  if (status.status === 'failed') {
    const error = status.error ?? { code: 'internal_error', message: 'the job failed' };
    throw new CliError(`job ${status.job_id} failed (${error.code}): ${withSeriesIds(error.message, options.ids)}`);
  }
  if (status.status !== 'completed') throw new CliError(`job ${status.job_id} is still ${status.status}; its results can be downloaded once it has completed`);
  let downloaded;
  try {
    downloaded = await downloadResults(client, status.job_id, options.outDir, options.ids);
  } catch (error) {
    // The job's work is done and kept: say so, and how to fetch it once the cause is fixed.
    if (!(error instanceof CliError)) throw error;
    const again = `forecast download ${status.job_id}${options.input ? ` --input ${options.input}` : ''} --out ${options.outDir}`;
    throw new CliError(`job ${status.job_id} completed, but its results could not be downloaded: ${error.message}`, error.exitCode, [
      ...error.details,
      `the results stay on the service: \`${again}\``,
    ]);
  }
  const { files, notes } = downloaded;
  for (const note of notes) process.stderr.write(`${note}\n`);
  if (!options.ids) {
    process.stderr.write('rows name their series by series_index (its place in the request); with --input FILE they also get the unique_id\n');
  }
  for (const file of files) process.stdout.write(`wrote ${file}\n`);
}
