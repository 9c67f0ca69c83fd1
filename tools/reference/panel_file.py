"""Writes a benchmark panel file: CSV lines, gzipped byte for byte the same on every run."""
import gzip
import sys


def write_panel(out_path, lines, count):
    """`lines` are the header and rows; `count` the series, for the message."""
    with gzip.GzipFile(out_path, "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())
    print(f"{count} series written to {out_path}", file=sys.stderr)
