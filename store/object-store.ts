import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * Where a job store keeps its objects, by key (`jobs/<id>/job.json`): the interface the job store
 * is written against, so that a local folder and an S3-compatible bucket can both hold a job.
 * Parquet results are written and read by DuckDB at `location(key)`.
 */
export interface ObjectStore {
  /** Where DuckDB reads or writes the object: a path in a local folder. */
  location(key: string): string;
  /** The parsed JSON object, or null when there is none. */
  readJson<T>(key: string): Promise<T | null>;
  /** Writes a JSON object whole: a reader sees the old object or the new one, never a part. */
  writeJson(key: string, value: unknown): Promise<void>;
  /** Writes an object that `produce` writes at the location it is given, replacing it whole. */
  writeWith(key: string, produce: (location: string) => Promise<void>): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Names directly under a prefix (`jobs/` -> job ids). */
  children(prefix: string): Promise<string[]>;
  openRead(key: string): Readable;
  /** Removes every object under a prefix. */
  removeAll(prefix: string): Promise<void>;
}

/** A local folder (DATA_DIR): objects are files, written under a temporary name and renamed into place. */
export class LocalFolder implements ObjectStore {
  constructor(readonly root: string) {}

  location(key: string): string {
    return path.join(this.root, key);
  }

  async readJson<T>(key: string): Promise<T | null> {
    try {
      return JSON.parse(await fs.promises.readFile(this.location(key), 'utf8')) as T;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  writeJson(key: string, value: unknown): Promise<void> {
    return this.writeWith(key, (tmp) => fs.promises.writeFile(tmp, JSON.stringify(value)));
  }

  async writeWith(key: string, produce: (location: string) => Promise<void>): Promise<void> {
    const file = this.location(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    // Unique per writer: two attempts of one chunk (a retry beside a worker thought dead) never share a file.
    const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await produce(tmp);
      await fs.promises.rename(tmp, file);
    } finally {
      await fs.promises.rm(tmp, { force: true });
    }
  }

  async exists(key: string): Promise<boolean> {
    return fs.promises.access(this.location(key)).then(
      () => true,
      () => false,
    );
  }

  async children(prefix: string): Promise<string[]> {
    return fs.promises.readdir(this.location(prefix)).catch(() => []);
  }

  openRead(key: string): Readable {
    return fs.createReadStream(this.location(key));
  }

  async removeAll(prefix: string): Promise<void> {
    await fs.promises.rm(this.location(prefix), { recursive: true, force: true });
  }
}
