import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * Where a job store keeps its objects, by key (`jobs/<id>/job.json`): the interface the job store
 * is written against, so that a local folder and an S3-compatible bucket both hold jobs.
 * Parquet results are written and read by DuckDB at `location(key)`, once `duckdbSetup()` has run.
 */
export interface ObjectStore {
  /** Where the store is, for messages and logs (`file:///data`, `s3://bucket/prefix`). */
  readonly url: string;
  /** Where DuckDB reads or writes the object: a local path or an `s3://` URL. */
  location(key: string): string;
  /** SQL that lets a DuckDB connection read and write `location(...)`; run again after `validUntil`. */
  duckdbSetup(): Promise<{ sql: string[]; validUntil: number }>;
  /** Stops the start with a clear message when the store cannot be used (no bucket, bad credentials). */
  check(): Promise<void>;
  /** The parsed JSON object, or null when there is none. */
  readJson<T>(key: string): Promise<T | null>;
  /** Writes a JSON object whole: a reader sees the old object or the new one, never a part. */
  writeJson(key: string, value: unknown): Promise<void>;
  /**
   * Writes a JSON object only where none exists; true when this call created it. Of concurrent
   * creators exactly one wins (idempotency records: one job per key, whatever the race).
   */
  createJson(key: string, value: unknown): Promise<boolean>;
  /**
   * Writes an object that `produce` writes at the location it is given, replacing it whole: a
   * reader never sees a part, and a failed `produce` leaves the old object (or none).
   */
  writeWith(key: string, produce: (location: string) => Promise<void>): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Names directly under a prefix (`jobs` -> job ids); empty when there is nothing under it. */
  children(prefix: string): Promise<string[]>;
  read(key: string): Promise<Readable>;
  /** Stores a local file as the object, streamed (never whole in memory); the file is left as it was. */
  putFile(key: string, file: string): Promise<void>;
  /** Streams the object into a local file. */
  getFile(key: string, file: string): Promise<void>;
  /** Removes every object under a prefix. */
  removeAll(prefix: string): Promise<void>;
  /** A DuckDB failure on the store's locations that means the store is away, as StoreUnavailableError; null for any other. */
  unavailable?(error: unknown): Error | null;
  /** Releases connections, if the store holds any. */
  close?(): void;
}

/** Unique per writer: two attempts of one chunk (a retry beside a worker thought dead) never share a file. */
const temporaryName = (file: string) => `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;

/** A local folder (DATA_DIR): objects are files, written under a temporary name and renamed into place. */
export class LocalFolder implements ObjectStore {
  readonly url: string;

  constructor(readonly root: string) {
    this.url = `file://${root}`;
  }

  location(key: string): string {
    return path.join(this.root, key);
  }

  async duckdbSetup(): Promise<{ sql: string[]; validUntil: number }> {
    return { sql: [], validUntil: Infinity };
  }

  async check(): Promise<void> {
    try {
      await fs.promises.mkdir(this.root, { recursive: true });
      await fs.promises.access(this.root, fs.constants.W_OK);
    } catch (error) {
      throw new Error(`the job store ${this.url} cannot be written: ${(error as Error).message}`);
    }
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

  async createJson(key: string, value: unknown): Promise<boolean> {
    const file = this.location(key);
    for (let attempt = 1; ; attempt++) {
      const tmp = temporaryName(file);
      try {
        await fs.promises.mkdir(path.dirname(file), { recursive: true });
        // Written whole under a temporary name, then linked into place: link(2) fails on an
        // existing name, atomically, so one creator wins and readers never see a part.
        await fs.promises.writeFile(tmp, JSON.stringify(value));
        await fs.promises.link(tmp, file);
        return true;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') return false;
        // Another writer removed the folder while we created it (a released lock): again. Even
        // the recursive mkdir can fail so, when the folder goes between its mkdir and its stat.
        if (code !== 'ENOENT' || attempt === 10) throw error;
      } finally {
        await fs.promises.rm(tmp, { force: true });
      }
    }
  }

  async writeWith(key: string, produce: (location: string) => Promise<void>): Promise<void> {
    const file = this.location(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    const tmp = temporaryName(file);
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
    // Temporary files of writes in progress are not objects yet.
    return (await fs.promises.readdir(this.location(prefix)).catch(() => [])).filter((name) => !name.includes('.tmp-'));
  }

  async read(key: string): Promise<Readable> {
    return fs.createReadStream(this.location(key));
  }

  putFile(key: string, file: string): Promise<void> {
    return this.writeWith(key, (tmp) => fs.promises.copyFile(file, tmp));
  }

  async getFile(key: string, file: string): Promise<void> {
    await fs.promises.copyFile(this.location(key), file);
  }

  async removeAll(prefix: string): Promise<void> {
    // Moved aside first, atomically, then removed: a recursive removal in place races with a
    // creator in the folder (a lock released while another is taken), and its retries on
    // ENOTEMPTY would remove an object created after it began. Once moved, the folder is this
    // call's alone, and its name (a temporary one) is in no listing.
    const doomed = temporaryName(this.location(prefix));
    try {
      await fs.promises.rename(this.location(prefix), doomed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    // Retried: a chunk abandoned by a cancellation may still write into the folder while it is
    // removed (ENOTEMPTY), as a DELETE of a running job found (test/contract).
    await fs.promises.rm(doomed, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}
