# Reference fits for test/bench/accuracy.ts: statsforecast's AutoETS, AutoARIMA, AutoTheta, AutoCES
# and MSTL with default arguments (season_length = the series' frequency; MSTL on hourly data: 24
# and 168, the day and the week) on each series, in one process.
#
# Usage: python statsforecast-accuracy.py <input> <output> <quantile levels, comma-separated> <label> [methods]
#
# methods: comma-separated subset of AutoETS,AutoARIMA,AutoTheta,AutoCES,MSTL (default all).
#
# The same protocol as accuracy.R (input: id,frequency,horizon,y1,...,yn a line; output:
# tab-separated "id method field value" lines: time, cpu, then error or mean and q<tau>).
# Quantile tau < 0.5 is the lower bound of the (1 - 2 tau) * 100 % interval, tau > 0.5 the upper
# bound of the (2 tau - 1) * 100 % interval, tau = 0.5 the mean.
# Each method is fitted once on a small series before timing starts, so that one-off set-up
# (imports, compilation) is not counted as the first series' time.
import sys
import time
import warnings

import numpy as np
from statsforecast.models import MSTL, AutoARIMA, AutoCES, AutoETS, AutoTheta

METHODS = {
    "AutoETS": lambda m: AutoETS(season_length=m),
    "AutoARIMA": lambda m: AutoARIMA(season_length=m),
    "AutoTheta": lambda m: AutoTheta(season_length=m),
    "AutoCES": lambda m: AutoCES(season_length=m),
    "MSTL": lambda m: MSTL(season_length=[m, 7 * m] if m == 24 else m),
}


def fmt(xs):
    return ",".join(repr(float(x)) for x in xs)


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: python statsforecast-accuracy.py <input> <output> <levels> [label]")
    input_path, output_path, levels_arg = sys.argv[1:4]
    label = sys.argv[4] if len(sys.argv) > 4 else "statsforecast"
    chosen = sys.argv[5].split(",") if len(sys.argv) > 5 else list(METHODS)
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        sys.exit(f"unknown methods: {unknown}")
    methods = {name: METHODS[name] for name in chosen}
    taus = [float(t) for t in levels_arg.split(",")]
    # Whole percentages as ints, so the interval keys read lo-80, not lo-80.0.
    widths = [(lambda w: int(w) if w == int(w) else w)(round(abs(2 * t - 1) * 100, 10)) for t in taus]
    levels = sorted({w for w in widths if w > 0})
    warnings.simplefilter("ignore")

    warm = np.sin(np.arange(60) / 3.0) + np.arange(60) / 10.0 + 5
    for make in methods.values():
        make(4).forecast(y=warm, h=4, level=levels)

    with open(input_path) as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    started = time.perf_counter()
    with open(output_path, "w") as out:
        for i, line in enumerate(lines, 1):
            parts = line.split(",")
            sid, m, h = parts[0], int(float(parts[1])), int(parts[2])
            y = np.array([float(v) for v in parts[3:]], dtype=np.float64)
            notes = []
            for name, make in methods.items():
                t0, c0 = time.perf_counter(), time.process_time()
                try:
                    fc = make(m).forecast(y=y, h=h, level=levels)
                    error = None
                except Exception as e:  # a failed fit is reported, not fatal
                    error = " ".join(f"{type(e).__name__}: {e}".split())
                elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
                out.write(f"{sid}\t{name}\ttime\t{elapsed:.6f}\n{sid}\t{name}\tcpu\t{cpu:.6f}\n")
                if error is not None:
                    out.write(f"{sid}\t{name}\terror\t{error}\n")
                    notes.append(f"{name} FAILED")
                    continue
                out.write(f"{sid}\t{name}\tmean\t{fmt(fc['mean'])}\n")
                for tau, width in zip(taus, widths):
                    if width == 0:
                        q = fc["mean"]
                    else:
                        q = fc[f"lo-{width}" if tau < 0.5 else f"hi-{width}"]
                    out.write(f"{sid}\t{name}\tq{tau:g}\t{fmt(q)}\n")
                notes.append(f"{name} {elapsed:.2f}s")
            out.flush()
            wall = time.perf_counter() - started
            eta = wall / i * (len(lines) - i)
            print(f"[{label}] {i}/{len(lines)} {sid}: {', '.join(notes)} | elapsed {wall:.0f}s, eta {eta:.0f}s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
