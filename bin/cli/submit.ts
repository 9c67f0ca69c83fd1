import { randomUUID } from 'node:crypto';
import { Option, type Command } from 'commander';
import type { ClientConfig } from '../../config.ts';
import { FREQUENCIES } from '../../engine/frequencies.ts';
import { ApiError, CliError, EXIT } from './errors.ts';
import { formatBytes } from './long-format.ts';
import { clientFor, columnsOf, positiveInteger, positiveNumber, quantileList, withColumnOptions } from './options.ts';
import { reportJobEnd } from './job-report.ts';
import { waitForJob } from './progress.ts';
import { readLongFormat } from './read-input.ts';
import { buildJobRequest, describeRequestPath, parseCreationDates, type CreationDate } from './request-body.ts';

/** The service's default body limit (MAX_BODY_BYTES); a larger body is checked for before reading the whole file. */
const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

interface SubmitOptions {
  model?: string;
  horizon: number;
  freq: string;
  fcds?: CreationDate[];
  quantiles?: number[];
  context?: number;
  idCol: string;
  timeCol: string;
  targetCol: string;
  out?: string;
  wait: boolean;
  interval: number;
  maxBodyBytes: number;
}

/** `forecast submit FILE --horizon H --freq F [...]`: a long-format file as a job (POST /forecast-jobs), followed to its results. */
export function submitCommand(program: Command, config: ClientConfig): void {
  const command = program
    .command('submit')
    .description('submit a long-format file (unique_id, ds, y) as a forecast job, show its progress and download its results')
    .argument('<file>', 'a .csv, .csv.gz or .parquet file, one row per series and timestamp')
    .requiredOption('--horizon <steps>', 'steps to forecast after each forecast creation date', positiveInteger)
    .addOption(new Option('--freq <freq>', "the series' frequency").choices(FREQUENCIES).makeOptionMandatory())
    .option('--model <name>', "model (default: the server's DEFAULT_MODEL, aets unless configured)")
    .option(
      '--fcds <list>',
      'forecast creation dates of a backtest, comma-separated: history lengths (12,16,20) or timestamps (2024-03-01,...), each the last observation a forecast sees; default: one forecast from the end',
      parseCreationDates,
    )
    .option('--quantiles <list>', "quantile levels, comma-separated (default: the service's, 0.1,0.9,0.4,0.5)", quantileList)
    .option('--context <steps>', 'observations each forecast may use at most (default: all)', positiveInteger);
  withColumnOptions(command)
    .option('--out <dir>', 'folder for predictions.parquet and metrics.parquet (default: ./<job_id>)')
    .option('--no-wait', 'submit, print the job id and return without waiting')
    .option('--interval <seconds>', 'seconds between progress checks', positiveNumber, 1)
    .option('--max-body-bytes <bytes>', "the server's request body limit, MAX_BODY_BYTES (checked before sending)", positiveInteger, DEFAULT_MAX_BODY_BYTES)
    .action(async (file: string, options: SubmitOptions, self: Command) => {
      const client = clientFor(self, config);
      const data = await readLongFormat(file, columnsOf(options), options.maxBodyBytes);
      const ignored =
        data.ignoredColumns.length > 0
          ? `; ignored column(s) ${data.ignoredColumns.join(', ')} (only ${options.idCol}, ${options.timeCol}, ${options.targetCol} are sent)`
          : '';
      process.stderr.write(`read ${file}: ${data.series.length} series, ${data.rowCount} rows${ignored}\n`);
      const request = buildJobRequest(data, {
        horizon: options.horizon,
        freq: options.freq,
        fcds: options.fcds ?? null,
        quantiles: options.quantiles ?? null,
        context: options.context ?? null,
      });
      const bytes = Buffer.byteLength(request.json);
      if (bytes > options.maxBodyBytes) throw tooLarge(file, bytes, options.maxBodyBytes);
      const query = options.model ? `?model=${encodeURIComponent(options.model)}` : '';
      let submitted: { job_id: string };
      try {
        submitted = await client.json<{ job_id: string }>('POST', `/forecast-jobs${query}`, request.json, randomUUID());
      } catch (error) {
        if (error instanceof ApiError && error.status === 413) throw tooLarge(file, bytes, null);
        throw error instanceof ApiError ? error.withPaths(describeRequestPath(data, request)) : error;
      }
      if (typeof submitted.job_id !== 'string' || submitted.job_id === '') throw client.notTheService('the submission', 'no job_id');
      const jobId = submitted.job_id;
      process.stderr.write(
        `submitted job ${jobId}: ${request.forecasts} forecasts of ${data.series.length} series${options.model ? ` with ${options.model}` : ''}\n`,
      );
      if (!options.wait) {
        process.stdout.write(`${jobId}\n`);
        process.stderr.write(
          `follow it with \`forecast status ${jobId} --wait\`; its results with unique_id: \`forecast download ${jobId} --input ${file}\`\n`,
        );
        return;
      }
      const final = await waitForJob(client, jobId, { intervalMs: options.interval * 1000, stream: process.stderr, forecasts: request.forecasts, input: file });
      await reportJobEnd(client, final, {
        outDir: options.out ?? jobId,
        ids: data.series.map((s) => s.id),
        input: file,
      });
    });
}

/** A body over the limit: found before sending (exit 2: nothing was sent), or answered 413 by the server. */
function tooLarge(file: string, bytes: number, limit: number | null): CliError {
  const over = limit === null ? "over the server's limit (413)" : `over ${formatBytes(limit)}`;
  return new CliError(`the request built from ${file} is ${formatBytes(bytes)}, ${over}`, limit === null ? EXIT.failed : EXIT.usage, [
    "the server's limit is its MAX_BODY_BYTES (64 MiB by default); where it allows more, say so with --max-body-bytes",
    'otherwise split the file by unique_id and submit each part as its own job',
  ]);
}
