import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * A benchmark's options, parsed strictly (no positionals). On a bad option it prints the message
 * and the usage, sets exit code 2 and returns null, so the benchmark only has to return.
 */
export function benchOptions<const O extends Options>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n${usage}`);
    process.exitCode = 2;
    return null;
  }
}
