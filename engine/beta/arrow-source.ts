import fs from 'node:fs';
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBDataChunk,
  DuckDBTimestampValue,
  TIMESTAMP,
  UBIGINT,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { AsyncMessageReader, CompressionType, DataType, MessageHeader, RecordBatchReader, TimeUnit, util, type Field, type Vector } from 'apache-arrow';
import { EngineError, refuseField, type FieldRef } from '../errors.ts';
import { sqlIdent } from '../sql.ts';
import { rowidView, unreadable, type ColumnInfo, type TableSource } from './table-sources.ts';

/**
 * An uploaded Arrow IPC part (file or stream format). DuckDB cannot read Arrow IPC without its
 * arrow extension, which this server may not download, so the part is decoded with apache-arrow
 * one record batch at a time and appended to a TEMP table in DuckDB chunks: only the columns the
 * query names are copied, and memory holds one batch on the JavaScript side.
 *
 * Compressed Arrow (LZ4_FRAME or ZSTD record batches) is refused: no decompressor is installed.
 */

interface Mapped {
  type: DuckDBType;
  /** The DuckDB type name `describe` reports, so role checks treat Parquet and Arrow alike. */
  typeName: string;
  convert: (value: unknown) => DuckDBValue;
  /** Reads a row from the vector's own buffers, where `vector.get`'s value has lost digits. */
  exact?: (vector: Vector) => (row: number) => DuckDBValue;
}

const asBigInt = (v: unknown): DuckDBValue => (v === null || v === undefined ? null : typeof v === 'bigint' ? v : BigInt(v as number));
const asNumber = (v: unknown): DuckDBValue => (v === null || v === undefined ? null : Number(v));
const asString = (v: unknown): DuckDBValue => (v === null || v === undefined ? null : String(v));
const asBoolean = (v: unknown): DuckDBValue => (v === null || v === undefined ? null : Boolean(v));
/** apache-arrow reads dates as epoch milliseconds (UTC). */
const asTimestamp = (v: unknown): DuckDBValue => (v === null || v === undefined ? null : new DuckDBTimestampValue(BigInt(Math.round(Number(v) * 1000))));

/** Microseconds per unit, or (nanoseconds) the divisor that takes a value to microseconds. */
const MICROS: Record<TimeUnit, { times: bigint; per: bigint }> = {
  [TimeUnit.SECOND]: { times: 1_000_000n, per: 1n },
  [TimeUnit.MILLISECOND]: { times: 1000n, per: 1n },
  [TimeUnit.MICROSECOND]: { times: 1n, per: 1n },
  [TimeUnit.NANOSECOND]: { times: 1n, per: 1000n },
};

/**
 * A timestamp column's rows as exact microseconds, from its 64-bit integers: apache-arrow's
 * values are float milliseconds, in which a nanosecond time just before a step's start rounds into
 * that step. Nanoseconds are dropped towards the past, as DuckDB's Parquet reader drops them
 * after 1970.
 */
const exactTimestamps =
  (unit: TimeUnit) =>
  (vector: Vector): ((row: number) => DuckDBValue) => {
    const { times, per } = MICROS[unit];
    // A sliced chunk's `values` already start at its first row (its `offset` is into the parent's buffer).
    const chunks = vector.data.map((data) => ({ values: data.values as BigInt64Array, length: data.length }));
    return (row) => {
      if (!vector.isValid(row)) return null;
      let at = row;
      let chunk = 0;
      while (at >= chunks[chunk].length) at -= chunks[chunk++].length;
      const raw = chunks[chunk].values[at];
      if (per !== 1n) return new DuckDBTimestampValue(raw >= 0n ? raw / per : (raw - per + 1n) / per);
      return new DuckDBTimestampValue(times === 1n ? raw : raw * times);
    };
  };

function mapType(type: DataType): Mapped | null {
  if (DataType.isDictionary(type)) return mapType(type.dictionary);
  // Unsigned 64-bit values reach 2^64, past BIGINT: DuckDB's UBIGINT, as its Parquet reader types them.
  if (DataType.isInt(type) && type.bitWidth === 64 && !type.isSigned) return { type: UBIGINT, typeName: 'UBIGINT', convert: asBigInt };
  if (DataType.isInt(type)) return { type: BIGINT, typeName: 'BIGINT', convert: asBigInt };
  if (DataType.isFloat(type)) return { type: DOUBLE, typeName: 'DOUBLE', convert: asNumber };
  if (DataType.isDecimal(type)) {
    const scale = type.scale;
    return {
      type: DOUBLE,
      typeName: 'DOUBLE',
      convert: (v) => (v === null || v === undefined ? null : util.bigNumToNumber(v as Parameters<typeof util.bigNumToNumber>[0], scale)),
    };
  }
  if (DataType.isBool(type)) return { type: BOOLEAN, typeName: 'BOOLEAN', convert: asBoolean };
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type)) return { type: VARCHAR, typeName: 'VARCHAR', convert: asString };
  if (DataType.isTimestamp(type)) return { type: TIMESTAMP, typeName: 'TIMESTAMP', convert: asTimestamp, exact: exactTimestamps(type.unit) };
  if (DataType.isDate(type)) return { type: TIMESTAMP, typeName: 'TIMESTAMP', convert: asTimestamp };
  return null;
}

/** Rows per DuckDB chunk (DuckDB's vector size). */
const CHUNK_ROWS = 2048;

export function arrowSource(label: string, at: FieldRef, file: string): TableSource {
  const failure = async (error: unknown): Promise<EngineError> => {
    if (error instanceof EngineError) return error;
    const codec = await compressionOf(file).catch(() => null);
    if (codec) {
      const name = codec === 'LZ4_FRAME' ? 'LZ4 (LZ4_FRAME)' : 'ZSTD';
      const message = `${label} is an Arrow file compressed with ${name}; compressed Arrow is not supported, because this server cannot decompress ${codec === 'LZ4_FRAME' ? 'LZ4' : 'ZSTD'}. Write it uncompressed (pyarrow: ipc.new_file(..., options=ipc.IpcWriteOptions(compression=None))) or upload Parquet`;
      return refuseField(at, message);
    }
    return unreadable({ label, at }, 'Arrow IPC', error);
  };
  /** A file handle gives apache-arrow random access: an IPC file's footer is read, not the whole file. */
  const withReader = async <T>(work: (reader: RecordBatchReader) => Promise<T>): Promise<T> => {
    const handle = await fs.promises.open(file, 'r');
    try {
      const reader = await RecordBatchReader.from(handle);
      await reader.open();
      return await work(reader);
    } finally {
      await handle.close();
    }
  };

  return {
    label,
    at,
    async describe(): Promise<ColumnInfo[]> {
      try {
        const fields = await withReader(async (reader) => reader.schema.fields);
        return fields.map((f) => ({ name: f.name, type: mapType(f.type)?.typeName ?? `UNSUPPORTED (Arrow ${String(f.type)})` }));
      } catch (error) {
        throw await failure(error);
      }
    },
    async attach(c, name, columns, position) {
      try {
        await withReader(async (reader) => {
          const fields = columns.map((col) => reader.schema.fields.find((f) => f.name === col)!);
          const mapped = fields.map((f) => {
            const m = mapType(f.type);
            if (!m) throw unsupported(label, at, f);
            return m;
          });
          // Rows are appended in the part's order, batch by batch, so a row's rowid is its place in
          // the upload, and no column is stored for it.
          const table = position ? `${name}_rows` : name;
          const stored = (i: number) => (position ? `c${i}` : sqlIdent(fields[i].name));
          await c.run(`CREATE TEMP TABLE ${sqlIdent(table)} (${fields.map((_, i) => `${stored(i)} ${mapped[i].typeName}`).join(', ')})`);
          await appendBatches(c, table, reader, fields, mapped);
          if (position) await rowidView(c, name, table, columns, position);
        });
      } catch (error) {
        throw await failure(error);
      }
    },
  };
}

function unsupported(label: string, at: FieldRef, field: Field): EngineError {
  const message = `column '${field.name}' of ${label} has the Arrow type ${String(field.type)}, which this server does not read; use numbers, text, booleans, dates or timestamps`;
  return refuseField(at, message);
}

async function appendBatches(c: DuckDBConnection, table: string, reader: RecordBatchReader, fields: Field[], mapped: Mapped[]): Promise<void> {
  const appender = await c.createAppender(table, 'main', 'temp');
  const chunk = DuckDBDataChunk.create(
    mapped.map((m) => m.type),
    CHUNK_ROWS,
  );
  try {
    for await (const batch of reader) {
      const vectors = fields.map((f) => batch.getChild(f.name) as Vector);
      for (let from = 0; from < batch.numRows; from += CHUNK_ROWS) {
        const n = Math.min(CHUNK_ROWS, batch.numRows - from);
        const columns = vectors.map((vector, j) => {
          const { convert, exact } = mapped[j];
          const read = exact ? exact(vector) : (row: number) => convert(vector.get(row));
          const out: DuckDBValue[] = new Array(n);
          for (let r = 0; r < n; r++) out[r] = read(from + r);
          return out;
        });
        chunk.reset();
        chunk.rowCount = n;
        chunk.setColumns(columns);
        appender.appendDataChunk(chunk);
      }
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/**
 * The compression codec of the first compressed record or dictionary batch, reading message
 * headers only. An Arrow file is its stream format between the 8-byte magic and the footer.
 */
export async function compressionOf(file: string): Promise<'LZ4_FRAME' | 'ZSTD' | null> {
  const head = Buffer.alloc(6);
  const handle = await fs.promises.open(file, 'r');
  await handle.read(head, 0, 6, 0).finally(() => handle.close());
  const start = head.toString('latin1') === 'ARROW1' ? 8 : 0;
  const messages = new AsyncMessageReader(fs.createReadStream(file, { start }) as unknown as AsyncIterable<Uint8Array>);
  try {
    for await (const message of messages) {
      const header = message.header() as { compression?: { type: CompressionType } | null; data?: { compression?: { type: CompressionType } | null } } | null;
      const compression = message.headerType === MessageHeader.DictionaryBatch ? header?.data?.compression : header?.compression;
      if (compression) return compression.type === CompressionType.LZ4_FRAME ? 'LZ4_FRAME' : 'ZSTD';
      if (message.bodyLength > 0) await messages.readMessageBody(message.bodyLength);
    }
    return null;
  } finally {
    await messages.return();
  }
}
