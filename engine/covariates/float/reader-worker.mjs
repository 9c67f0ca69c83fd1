// Worker thread that reads float data sources through DuckDB for the synchronous forecast planner
// (engine/covariates/float/float-sources.ts). Plain JavaScript: it needs no TypeScript loader.
//
// Each message carries a request, a MessagePort for the answer and an Int32Array over a
// SharedArrayBuffer: the answer is posted on the port first, then the flag is set and notified,
// so the waiting thread finds the answer as soon as it wakes.
import { parentPort } from 'node:worker_threads';
import { DuckDBInstance } from '@duckdb/node-api';

let database;

const ident = (name) => `"${String(name).replaceAll('"', '""')}"`;
const literal = (text) => `'${String(text).replaceAll("'", "''")}'`;

function relation(path) {
  return /\.parquet$/i.test(path) ? `read_parquet(${literal(path)})` : `read_csv(${literal(path)})`;
}

async function handle(request) {
  database ??= await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const c = await database.connect();
  try {
    await c.run("SET TimeZone = 'UTC'").catch(() => {});
    if (request.kind === 'describe') {
      const rows = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${relation(request.path)}`)).getRowObjectsJS();
      const columns = rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
      // DuckDB 1.5.5 types a Parquet decimal of more than 38 digits as DOUBLE and reads wrong
      // numbers from it (decision 099): such a column is described as what it is, not as numeric.
      if (/\.parquet$/i.test(request.path) && columns.some((col) => col.type === 'DOUBLE')) {
        const wide = (
          await c.runAndReadAll(
            `SELECT name, CAST(precision AS INTEGER) AS p, CAST(scale AS INTEGER) AS s FROM parquet_schema(${literal(request.path)}) WHERE converted_type = 'DECIMAL' AND precision > 38`,
          )
        ).getRowObjectsJS();
        for (const { name, p, s } of wide) {
          const col = columns.find((c) => c.name === name && c.type === 'DOUBLE');
          if (col) col.type = `DECIMAL(${p},${s}) of more than 38 digits`;
        }
      }
      return columns;
    }
    if (request.kind === 'read') {
      // Times as the wall clock of the file (a zoned time is taken in UTC), epoch milliseconds.
      const sql = `SELECT epoch_ms(CAST(${ident(request.timeColumn)} AS TIMESTAMP)) AS t, CAST(${ident(request.column)} AS DOUBLE) AS v
                   FROM ${relation(request.path)} WHERE ${ident(request.timeColumn)} IS NOT NULL ORDER BY 1`;
      const rows = (await c.runAndReadAll(sql)).getRowsJS();
      const times = new Float64Array(rows.length);
      const values = new Float64Array(rows.length);
      rows.forEach(([t, v], i) => {
        times[i] = Number(t);
        values[i] = v === null ? NaN : Number(v);
      });
      return { times, values };
    }
    throw new Error(`unknown request kind ${request.kind}`);
  } finally {
    c.closeSync();
  }
}

parentPort.on('message', async ({ signal, port, request }) => {
  let reply;
  try {
    reply = { ok: true, value: await handle(request) };
  } catch (err) {
    reply = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
  port.close();
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
});
