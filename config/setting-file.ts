import fs from 'node:fs';
import path from 'node:path';

/** The environment the configuration is read from: the process's, or another (tests, tools). */
export type Environment = Record<string, string | undefined>;

/** The text of a file named by a setting; a file that cannot be read stops the start with its name. */
export function readSetting(name: string, file: string): string {
  try {
    return fs.readFileSync(path.resolve(file), 'utf8');
  } catch (error) {
    throw new Error(`${name}=${file} cannot be read: ${(error as Error).message}`);
  }
}
