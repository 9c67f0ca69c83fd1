"""
Arrow IPC fixtures for test/beta, written by pyarrow (a writer other than the service's code):

  sales-lz4.arrow     IPC file, record batches compressed with LZ4_FRAME  (must be refused)
  sales-lz4.arrows    IPC stream, LZ4_FRAME                               (must be refused)
  sales-zstd.arrow    IPC file, ZSTD                                      (must be refused)
  sales-pyarrow.arrow IPC file, uncompressed, with a time-zoned timestamp and a
                      dictionary-encoded identifier                      (must be read)

The table: two stores (a, b), 14 days from 2024-01-01, sales = day number (+100 for store b).
Run from the repository root:  python3 tools/beta/make-arrow-fixtures.py   (needs pyarrow)
"""
import datetime
import pathlib

import pyarrow as pa
import pyarrow.ipc as ipc

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
print(f"wrote 4 fixtures to {OUT} with pyarrow {pa.__version__}")
