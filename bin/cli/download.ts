import type { Command } from 'commander';
import type { ClientConfig } from '../../config.ts';
import { CliError } from './errors.ts';
import { reportJobEnd } from './job-report.ts';
import { clientFor, columnsOf, withColumnOptions } from './options.ts';
import { fetchJobStatus } from './progress.ts';
import { readLongFormat } from './read-input.ts';

/** `forecast download ID [--input FILE] [--out DIR]`: a completed job's Parquet results. */
export function downloadCommand(program: Command, config: ClientConfig): void {
  const command = program
    .command('download')
    .description("download a completed job's results (predictions.parquet, metrics.parquet) into a folder")
    .argument('<job_id>')
    .option('--out <dir>', 'folder for the results (default: ./<job_id>)')
    .option('--input <file>', 'the file the job was submitted from: its unique_ids are added to the results');
  withColumnOptions(command).action(
    async (jobId: string, options: { out?: string; input?: string; idCol: string; timeCol: string; targetCol: string }, self: Command) => {
      const client = clientFor(self, config);
      const status = await fetchJobStatus(client, jobId);
      let ids: string[] | null = null;
      if (options.input) {
        // The series were sent in unique_id order, so the same file gives each series_index its id.
        const data = await readLongFormat(options.input, columnsOf(options), Infinity);
        ids = data.series.map((s) => s.id);
        if (status.total_series !== undefined && status.total_series !== ids.length) {
          throw new CliError(
            `job ${jobId} has ${status.total_series} series but ${options.input} has ${ids.length} unique_ids: it is not the file the job was submitted from`,
          );
        }
      }
      await reportJobEnd(client, status, { outDir: options.out ?? jobId, ids, input: options.input });
    },
  );
}
