import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse } from 'csv-parse';
import { sqlIdent, sqlString, withConnection } from '../../engine/sql.ts';
import { UsageError } from './errors.ts';
import { parseTargetCell, parseTimestampCell, SeriesCollector, type LongFormatColumns, type LongFormatData } from './long-format.ts';

/**
 * Reads a long-format file, CSV (optionally gzipped) or Parquet, row by row into series. Columns
 * other than the three are not sent: the caller hears which (docs/dashboard-and-cli.md, "Command line": extra
 * columns are ignored, since files often carry an index or covariates the stable API takes in
 * another shape).
 */
export async function readLongFormat(file: string, columns: LongFormatColumns, maxBodyBytes: number): Promise<LongFormatData> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new UsageError(`cannot read ${file}: no such file`);
  }
  if (!stat.isFile()) throw new UsageError(`${file} is not a file`);
  if (/\.(parquet|pq)$/i.test(file)) return readParquet(file, columns, maxBodyBytes);
  if (/\.csv(\.gz)?$/i.test(file)) return readCsv(file, columns, maxBodyBytes);
  throw new UsageError(`${file}: unknown format; expected a .csv, .csv.gz or .parquet file in the long format (${columnList(columns)})`);
}

const columnList = (c: LongFormatColumns) => `columns ${c.id}, ${c.time}, ${c.target}`;

/** The position of each of the three columns, or a refusal naming the missing ones and what the file has. */
function locateColumns(file: string, header: string[], columns: LongFormatColumns): { id: number; time: number; target: number; ignored: string[] } {
  const wanted = [columns.id, columns.time, columns.target];
  const missing = wanted.filter((name) => !header.includes(name));
  if (missing.length > 0) {
    throw new UsageError(`${file} has no column ${missing.map((m) => `'${m}'`).join(', ')}`, [
      `its columns: ${header.join(', ') || '(none)'}`,
      `the long format has ${columnList(columns)}; other names can be given with --id-col, --time-col and --target-col`,
    ]);
  }
  return {
    id: header.indexOf(columns.id),
    time: header.indexOf(columns.time),
    target: header.indexOf(columns.target),
    ignored: header.filter((name) => !wanted.includes(name)),
  };
}

async function readCsv(file: string, columns: LongFormatColumns, maxBodyBytes: number): Promise<LongFormatData> {
  const collector = new SeriesCollector(file, maxBodyBytes);
  const parser = parse({ bom: true, skip_empty_lines: true, trim: true });
  const stages = file.toLowerCase().endsWith('.gz') ? [fs.createReadStream(file), zlib.createGunzip()] : [fs.createReadStream(file)];
  // The feeding side's failure (a corrupt gzip stream) also ends the loop below, with its error.
  const feeding = pipeline([...stages, parser]).catch(() => undefined);
  let at: ReturnType<typeof locateColumns> | undefined;
  let row = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!at) {
        at = locateColumns(file, record, columns);
        continue;
      }
      const where = `${file} row ${row}`;
      const id = record[at.id];
      if (!id) throw new UsageError(`${where}: ${columns.id} is empty`);
      collector.add(id, parseTimestampCell(record[at.time], where, columns.time), parseTargetCell(record[at.target], where, columns.target), row++);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${file} is not a readable CSV file: ${(error as Error).message}`);
  } finally {
    parser.destroy();
    await feeding;
  }
  if (!at) throw new UsageError(`${file} is empty; expected a header with ${columnList(columns)}`);
  return collector.finish(at.ignored);
}

/** How a Parquet column of each type becomes the text the API takes. */
function timestampSql(column: string, type: string): string | null {
  const name = sqlIdent(column);
  if (type === 'DATE') return `strftime(${name}, '%Y-%m-%d')`;
  if (type === 'TIMESTAMP WITH TIME ZONE') return `strftime(timezone('UTC', ${name}), '%Y-%m-%dT%H:%M:%SZ')`;
  if (type.startsWith('TIMESTAMP')) return `strftime(${name}::TIMESTAMP, '%Y-%m-%dT%H:%M:%S')`;
  if (type === 'VARCHAR') return name;
  return null;
}

const NUMERIC_TYPES = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL.*)$/;

async function readParquet(file: string, columns: LongFormatColumns, maxBodyBytes: number): Promise<LongFormatData> {
  const collector = new SeriesCollector(file, maxBodyBytes);
  const db = await DuckDBInstance.create(':memory:');
  try {
    return await withConnection(db, async (connection) => {
      const source = `read_parquet(${sqlString(file)}, file_row_number = true)`;
      let described;
      try {
        described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sqlString(file)})`)).getRowObjectsJS();
      } catch (error) {
        throw new UsageError(`${file} is not a readable Parquet file: ${(error as Error).message.split('\n')[0]}`);
      }
      const types = new Map(described.map((row) => [String(row.column_name), String(row.column_type)]));
      const at = locateColumns(file, [...types.keys()], columns);
      const timeType = types.get(columns.time)!;
      const targetType = types.get(columns.target)!;
      const time = timestampSql(columns.time, timeType);
      if (!time) throw new UsageError(`${file}: column ${columns.time} is ${timeType}; expected a DATE, a TIMESTAMP or text`);
      const numeric = NUMERIC_TYPES.test(targetType);
      if (!numeric && targetType !== 'VARCHAR') throw new UsageError(`${file}: column ${columns.target} is ${targetType}; expected numbers`);
      const target = numeric ? `${sqlIdent(columns.target)}::DOUBLE` : sqlIdent(columns.target);
      const result = await connection.stream(`SELECT ${sqlIdent(columns.id)}::VARCHAR, ${time}, ${target}, file_row_number FROM ${source}`);
      // Column vectors per chunk: faster than converting row by row.
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        const [ids, times, values, rows] = chunk.getColumns() as [(string | null)[], (string | null)[], (number | string | null)[], bigint[]];
        for (let i = 0; i < ids.length; i++) {
          const where = `${file} row ${rows[i]}`;
          const id = ids[i];
          if (id === null || id === '') throw new UsageError(`${where}: ${columns.id} is empty`);
          if (times[i] === null) throw new UsageError(`${where}: ${columns.time} is empty`);
          collector.add(id, parseTimestampCell(times[i]!, where, columns.time), parseTargetCell(values[i], where, columns.target), Number(rows[i]));
        }
      }
      return collector.finish(at.ignored);
    });
  } finally {
    db.closeSync();
  }
}
