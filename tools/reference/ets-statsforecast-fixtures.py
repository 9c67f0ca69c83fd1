# Reference fixtures for `aets` with its default estimation ("statsforecast", models/families/ets/statsforecast-estimation.ts),
# produced by statsforecast's AutoETS (statsforecast.ets.ets_f, which AutoETS.fit calls, and
# AutoETS.predict for the mean and the 80% interval).
#
# Usage (from the project root), in a virtual environment of its own:
#   "$(bash scripts/ensure-statsforecast.sh)" tools/reference/ets-statsforecast-fixtures.py
# Writes test/fixtures/ets/statsforecast.json.
#
# For every series: the selected method, its smoothing parameters and AICc, the AICc of every
# candidate fitted on its own (ets_f with the model fixed is not the same search: statsforecast
# narrows its parameter bounds as it goes through the candidates, so the candidates are read from
# one automatic search by fitting in the reference's order and recording each), and the forecast.
import csv
import gzip
import json
import math
import os
from collections import defaultdict

import numpy as np
import statsforecast
from statsforecast import ets as sf_ets
from statsforecast.models import AutoETS

OUT = "test/fixtures/ets/statsforecast.json"
HOURLY_TAIL = 240


def m4(path, ids, tail=None):
    rows = defaultdict(list)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r["unique_id"] in ids and r["split"] == "train":
                rows[r["unique_id"]].append(float(r["y"]))
    return [(i, rows[i][-tail:] if tail else rows[i]) for i in ids]


def simulated():
    rng = np.random.default_rng(20261123)
    t = np.arange(96)
    out = [
        # Monthly-like: trend and a multiplicative season, positive.
        ("sim-trend-season-m12", 12, (100 + 0.8 * t) * (1 + 0.2 * np.sin(2 * np.pi * t / 12)) * np.exp(rng.normal(0, 0.03, 96))),
        # Quarterly-like: random-walk level with an additive season.
        ("sim-rw-season-m4", 4, 50 + np.cumsum(rng.normal(0, 1, 60)) + np.tile([3.0, -1.0, -4.0, 2.0], 15)),
        # Crosses zero: additive errors only.
        ("sim-negative-m1", 1, np.cumsum(rng.normal(0, 1, 50))),
        # Damped trend, no season.
        ("sim-damped-m1", 1, 20 + 10 * (1 - 0.9 ** np.arange(40)) + rng.normal(0, 0.3, 40)),
        # Fewer than three cycles: seasonal starts from the Fourier regression.
        ("sim-short-season-m12", 12, 30 + 5 * np.sin(2 * np.pi * np.arange(30) / 12) + rng.normal(0, 0.5, 30)),
    ]
    return [(i, m, np.asarray(y, dtype=float).tolist()) for i, m, y in out]


def num(v):
    v = float(v)
    return None if math.isnan(v) else v


def candidates(y, m):
    # Every fit the automatic search makes, in its order, with the bounds it narrows as it goes.
    seen = []
    original = sf_ets.etsmodel

    def spy(*args, **kwargs):
        fit = original(*args, **kwargs)
        e, t, s, d = args[2], args[3], args[4], args[5]
        seen.append({"method": f"ETS({e},{t}{'d' if d else ''},{s})", "aicc": num(fit["aicc"])})
        return fit

    sf_ets.etsmodel = spy
    try:
        sf_ets.ets_f(np.asarray(y, dtype=float), m, model="ZZZ")
    finally:
        sf_ets.etsmodel = original
    return seen


def record(series_id, m, y, h):
    y = np.asarray(y, dtype=float)
    model = AutoETS(season_length=m).fit(y)
    fit = model.model_
    fc = model.predict(h=h, level=[80])
    alpha, beta, gamma, phi = (num(v) for v in fit["par"][:4])
    return {
        "id": series_id,
        "m": m,
        "h": h,
        "y": y.tolist(),
        "method": fit["method"],
        "par": {"alpha": alpha, "beta": beta, "gamma": gamma, "phi": phi},
        "aicc": num(fit["aicc"]),
        "sigma2": num(fit["sigma2"]),
        "candidates": candidates(y, m),
        "mean": fc["mean"].tolist(),
        "lo80": fc["lo-80"].tolist(),
        "hi80": fc["hi-80"].tolist(),
    }


def main():
    cases = []
    for sid, y in m4("datasets/m4-hourly.csv.gz", ["H1", "H37", "H150", "H250", "H344"], tail=HOURLY_TAIL):
        cases.append(record(sid, 24, y, 48))
    for sid, y in m4("datasets/m4-weekly.csv.gz", ["W1", "W20", "W100", "W180", "W300"]):
        cases.append(record(sid, 52, y, 13))
    for sid, m, y in simulated():
        cases.append(record(sid, m, y, 2 * max(m, 4)))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"statsforecast": statsforecast.__version__, "cases": cases}, f, allow_nan=False)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT}: " + "; ".join(f"{c['id']}: {c['method']}" for c in cases))


if __name__ == "__main__":
    main()
