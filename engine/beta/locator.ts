import fs from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { EngineError, refuseField, type FieldRef } from '../errors.ts';
import { parquetSource, type ColumnInfo, type TableSource } from './table-sources.ts';

/**
 * The locator form: `input.source` (or a covariate's `source`) is a string naming Parquet data
 * where it lives. Local paths and globs are read only inside the configured data root: a path
 * outside it, any `..` segment, and a file whose real path (symbolic links resolved) leaves the
 * root are refused. Object-store URLs are passed to DuckDB only for the schemes the server
 * enables, with the credentials DuckDB itself is configured with.
 */

export interface LocatorConfig {
  /** Root directory of local locators; null disables them. */
  dataRoot: string | null;
  /** Object-store URL schemes DuckDB may read (`s3`, `gs`, `az`, `https`...); empty disables them. */
  objectStores: string[];
}

/** Most files one locator may expand to. */
export const MAX_LOCATOR_FILES = 10_000;

export function locatorSource(locator: string, config: LocatorConfig, where: FieldRef): TableSource {
  const label = `locator '${locator}'`;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(locator)?.[1]?.toLowerCase();
  if (scheme === 'inline') throw refuseField(where, `inline:// names an uploaded part: write it as {"uri": "${locator}"}`);
  if (scheme !== undefined && scheme !== 'file') {
    if (!config.objectStores.includes(scheme)) {
      throw refuseField(
        where,
        `${scheme}:// locators are not enabled on this server${config.objectStores.length ? ` (enabled: ${config.objectStores.join(', ')})` : ''}; upload the data as a part instead`,
      );
    }
    return objectStoreSource(locator, label, where);
  }
  if (config.dataRoot === null)
    throw refuseField(where, 'locators of local files are not enabled on this server (BETA_DATA_ROOT is not set); upload the data as a part instead');
  const relative = scheme === 'file' ? locator.slice('file://'.length) : locator;
  if (relative.includes('\0') || relative.split(/[\\/]/).includes('..')) throw refuseField(where, `${label}: '..' is not allowed in a locator`);
  const root = fs.realpathSync(config.dataRoot);
  const pattern = path.resolve(root, relative);
  if (!isInside(root, pattern)) throw refuseField(where, `${label} is outside the data root; locators are paths relative to it`);

  let files: string[] | undefined;
  const expand = async (c: DuckDBConnection): Promise<string[]> => {
    if (files) return files;
    const found = (await c.runAndReadAll('SELECT file FROM glob($1) ORDER BY file', [pattern])).getRowsJS().map(([f]) => String(f));
    if (found.length === 0) throw refuseField(where, `${label} matches no file under the data root`);
    if (found.length > MAX_LOCATOR_FILES) throw refuseField(where, `${label} matches ${found.length} files; at most ${MAX_LOCATOR_FILES} are read`);
    for (const file of found) {
      let real: string;
      try {
        real = fs.realpathSync(file);
      } catch {
        throw refuseField(where, `${label}: ${path.relative(root, file)} cannot be read`);
      }
      if (!isInside(root, real))
        throw refuseField(where, `${label}: ${path.relative(root, file)} leads outside the data root (a symbolic link); it is not read`);
      if (!fs.statSync(real).isFile()) throw refuseField(where, `${label}: ${path.relative(root, file)} is not a file`);
    }
    return (files = found);
  };
  return deferred(label, where, expand);
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function objectStoreSource(url: string, label: string, where: FieldRef): TableSource {
  return deferred(label, where, async (c) => {
    try {
      await c.run('LOAD httpfs');
    } catch (error) {
      throw new EngineError(
        'object_store_unavailable',
        `object-store locators are enabled but DuckDB cannot load its httpfs extension here: ${(error as Error).message.split('\n')[0]}`,
      );
    }
    return [url];
  });
}

/**
 * A Parquet source whose file list is found (and checked) on first use, with the request's
 * connection. One source per connection, so that describing and attaching share its description;
 * a new connection finds the files again (an object store's extension is loaded per connection).
 */
function deferred(label: string, where: FieldRef, files: (c: DuckDBConnection) => Promise<string[]>): TableSource {
  const made = new WeakMap<DuckDBConnection, Promise<TableSource>>();
  const source = (c: DuckDBConnection): Promise<TableSource> => {
    let found = made.get(c);
    if (!found) made.set(c, (found = files(c).then((list) => parquetSource(label, where, list))));
    return found;
  };
  return {
    label,
    at: where,
    describe: async (c): Promise<ColumnInfo[]> => (await source(c)).describe(c),
    attach: async (c, name, columns, position) => (await source(c)).attach(c, name, columns, position),
  };
}
