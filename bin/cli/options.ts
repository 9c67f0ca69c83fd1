import { InvalidArgumentError, type Command } from 'commander';
import type { ClientConfig } from '../../config.ts';
import { ApiClient } from './client.ts';
import { DEFAULT_COLUMNS, type LongFormatColumns } from './long-format.ts';

/** Option parsers and options shared by several commands. */

export function positiveInteger(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return value;
}

export function positiveNumber(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) throw new InvalidArgumentError('expected a number above 0');
  return value;
}

/** `0.1,0.5,0.9`: distinct levels strictly between 0 and 1 (the service checks them too; this says it before reading a large file). */
export function quantileList(text: string): number[] {
  const levels = text.split(',').map((s) => s.trim());
  const values = levels.map(Number);
  const bad = levels.find((s, i) => s === '' || !(values[i] > 0 && values[i] < 1));
  if (bad !== undefined) throw new InvalidArgumentError(`'${bad}' is not a level between 0 and 1 (for example 0.1,0.5,0.9)`);
  if (new Set(values).size !== values.length) throw new InvalidArgumentError('the levels must be distinct');
  return values;
}

/** --id-col, --time-col, --target-col: the long format's column names, for files that name them otherwise. */
export function withColumnOptions(command: Command): Command {
  return command
    .option('--id-col <name>', 'column naming the series', DEFAULT_COLUMNS.id)
    .option('--time-col <name>', 'column of timestamps', DEFAULT_COLUMNS.time)
    .option('--target-col <name>', 'column of values', DEFAULT_COLUMNS.target);
}

export const columnsOf = (options: { idCol: string; timeCol: string; targetCol: string }): LongFormatColumns => ({
  id: options.idCol,
  time: options.timeCol,
  target: options.targetCol,
});

/** The client for a command: --url and --api-key (global options) over the environment's FORECAST_URL and FORECAST_API_KEY. */
export function clientFor(command: Command, config: ClientConfig): ApiClient {
  const { url, apiKey } = command.optsWithGlobals<{ url?: string; apiKey?: string }>();
  return new ApiClient({ baseUrl: url ?? config.baseUrl, apiKey: apiKey ?? config.apiKey });
}
