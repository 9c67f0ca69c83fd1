"""
Arrow IPC and Parquet fixtures for test/beta, written by pyarrow (a writer other than the service's code):

  sales-lz4.arrow     IPC file, record batches compressed with LZ4_FRAME  (must be refused)
  sales-lz4.arrows    IPC stream, LZ4_FRAME                               (must be refused)
  sales-zstd.arrow    IPC file, ZSTD                                      (must be refused)
  sales-pyarrow.arrow IPC file, uncompressed, with a time-zoned timestamp and a
                      dictionary-encoded identifier                      (must be read)
  sales-decimal256.parquet  Parquet, sales as DECIMAL(40, 2): wider than DuckDB 1.5.5
                      reads correctly                                    (must be refused)

The table: two stores (a, b), 14 days from 2024-01-01, sales = day number (+100 for store b).
Run from the repository root:  python3 tools/beta/make-arrow-fixtures.py   (needs pyarrow)
"""
import datetime
import pathlib

import pyarrow as pa
import decimal

import pyarrow.ipc as ipc
import pyarrow.parquet as pq

OUT = pathlib.Path(__file__).resolve().parents[2] / "test" / "fixtures" / "beta"
OUT.mkdir(parents=True, exist_ok=True)

days = 14
start = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
rows = [(start + datetime.timedelta(days=d), store, float(d + 1 + (100 if store == "b" else 0))) for store in ("a", "b") for d in range(days)]
table = pa.table(
    {
        "ts": pa.array([r[0] for r in rows], pa.timestamp("us", tz="Europe/Paris")),
        "store": pa.array([r[1] for r in rows]).dictionary_encode(),
        "sales": pa.array([r[2] for r in rows], pa.float64()),
    }
)


def write_file(name, compression):
    with ipc.new_file(OUT / name, table.schema, options=ipc.IpcWriteOptions(compression=compression)) as w:
        w.write_table(table)


def write_stream(name, compression):
    with ipc.new_stream(OUT / name, table.schema, options=ipc.IpcWriteOptions(compression=compression)) as w:
        w.write_table(table)


write_file("sales-lz4.arrow", "lz4")
write_stream("sales-lz4.arrows", "lz4")
write_file("sales-zstd.arrow", "zstd")
write_file("sales-pyarrow.arrow", None)
wide = table.set_column(2, "sales", pa.array([decimal.Decimal(f"{r[2]:.2f}") for r in rows], pa.decimal256(40, 2)))
pq.write_table(wide, OUT / "sales-decimal256.parquet")
print(f"wrote 5 fixtures to {OUT} with pyarrow {pa.__version__}")
