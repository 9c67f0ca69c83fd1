# Reference fixtures for the `theta` model (models/families/theta/theta.ts), produced by statsforecast's
# AutoTheta (statsforecast.theta.auto_theta and forecast_theta).
#
# Usage (from the project root), in a virtual environment of its own:
#   bash scripts/ensure-statsforecast.sh   (prints the environment's python)
#   "$(bash scripts/ensure-statsforecast.sh)" tools/reference/theta-fixtures.py
# Writes test/fixtures/theta/statsforecast.json.
#
# For every series it records what auto_theta(y, m) selects (model type, fitted initial level,
# alpha and theta, its in-sample MSE objective), whether the seasonal test decomposed the series
# and how, the mean forecast, and the 80% interval forecast_theta draws from 200 simulated paths.
import csv
import gzip
import json
import os
from collections import defaultdict

import numpy as np
import statsforecast
from statsforecast.models import AutoTheta
from statsforecast.theta import auto_theta, forecast_theta
from statsforecast.utils import ConformalIntervals

OUT = "test/fixtures/theta/statsforecast.json"


def m4(path, ids):
    rows = defaultdict(list)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r["unique_id"] in ids and r["split"] == "train":
                rows[r["unique_id"]].append(float(r["y"]))
    return [(i, rows[i]) for i in ids]


def simulated():
    rng = np.random.default_rng(20261123)
    t = np.arange(96)
    monthly = 100 + 0.8 * t
    out = [
        # Multiplicative seasonality on a trend: decomposed multiplicatively.
        ("sim-monthly-mult", 12, monthly * (1 + 0.25 * np.sin(2 * np.pi * t / 12)) + rng.normal(0, 2, t.size)),
        # Seasonal around zero: not positive, so decomposed additively.
        ("sim-monthly-add-neg", 12, 5 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 0.5, t.size) - 1),
        # A seasonal factor below 0.01 switches multiplicative to additive.
        ("sim-quarterly-tiny-factor", 4, np.tile([100.0, 100.0, 100.0, 0.2], 10) + 20 + rng.uniform(0, 1, 40)),
        # No seasonality: a random walk with drift, an AR(1), a short series.
        ("sim-random-walk", 1, 50 + np.cumsum(rng.normal(0.3, 1.0, 80))),
        ("sim-ar1", 1, 10 + np.array([0.7**k for k in range(60)]) * 0 + np.convolve(rng.normal(0, 1, 60), [1, 0.6, 0.36], "same")),
        ("sim-short-n5", 1, np.array([3.0, 4.0, 3.5, 5.0, 4.5])),
        ("sim-short-seasonal-n20", 4, np.array([10, 20, 30, 15] * 5, dtype=float) + np.arange(20)),
        ("sim-trend-down", 1, 200 - 1.5 * np.arange(50) + rng.normal(0, 3, 50)),
    ]
    return [(i, m, np.asarray(y, dtype=float).tolist()) for i, m, y in out]


def record(series_id, m, y, h):
    y = np.asarray(y, dtype=float)
    fit = auto_theta(y, m)
    fc = forecast_theta(fit, h, level=[80])
    return {
        "id": series_id,
        "m": m,
        "h": h,
        "y": y.tolist(),
        "modeltype": fit["modeltype"],
        "par": {k: float(v) for k, v in fit["par"].items()},
        "mse": float(fit["mse"]),
        "decompose": bool(fit.get("decompose", False)),
        "decomposition_type": fit.get("decomposition_type"),
        "mean": fc["mean"].tolist(),
        "lo80": fc["lo-80"].astype(float).tolist(),
        "hi80": fc["hi-80"].astype(float).tolist(),
    }


def conformal(series_id, m, y, h, windows):
    # Conformal quantiles (models/numerics/conformal.ts) on top of AutoTheta, whose means we reproduce.
    y = np.asarray(y, dtype=float)
    model = AutoTheta(season_length=m, prediction_intervals=ConformalIntervals(h=h, n_windows=windows))
    fc = model.forecast(y=y, h=h, level=[80, 95])
    return {
        "id": series_id,
        "m": m,
        "h": h,
        "windows": windows,
        "y": y.tolist(),
        "mean": fc["mean"].tolist(),
        **{k: fc[k].astype(float).tolist() for k in ("lo-95", "lo-80", "hi-80", "hi-95")},
    }


def main():
    cases = []
    for sid, y in m4("datasets/m4-hourly.csv.gz", ["H1", "H5", "H37", "H150", "H250", "H400"]):
        cases.append(record(sid, 24, y, 48))
    for sid, y in m4("datasets/m4-weekly.csv.gz", ["W1", "W20", "W100", "W250", "W359"]):
        # Weekly also non-seasonal: M4's own naive2 deseasonalises weekly data with m = 1.
        cases.append(record(sid, 52, y, 13))
        cases.append(record(sid + "-m1", 1, y, 13))
    for sid, m, y in simulated():
        cases.append(record(sid, m, y, 2 * max(m, 4)))
    conformal_cases = [
        conformal("H5", 24, next(y for i, y in m4("datasets/m4-hourly.csv.gz", ["H5"])), 48, 5),
        conformal("W100", 52, next(y for i, y in m4("datasets/m4-weekly.csv.gz", ["W100"])), 13, 2),
        # A short history: only 3 of the 10 windows asked for fit.
        conformal("sim-trend-down", 1, simulated()[-1][2], 15, 10),
    ]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"statsforecast": statsforecast.__version__, "cases": cases, "conformal": conformal_cases}, f)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
