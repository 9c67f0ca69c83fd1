# Reference fixtures for the `ces` model (models/families/ces/ces.ts), produced by statsforecast's AutoCES
# (statsforecast.ces.auto_ces and forecast_ces, which AutoCES.fit / predict call).
#
# Usage (from the project root), in a virtual environment of its own:
#   bash scripts/ensure-statsforecast.sh   (prints the environment's python)
#   "$(bash scripts/ensure-statsforecast.sh)" tools/reference/ces-fixtures.py
# Writes test/fixtures/ces/statsforecast.json.
#
# For every series it records what auto_ces(y, m) selects (variant, smoothing parameters, AICc
# and the other criteria, sigma2), the same for every candidate variant fitted on its own
# (auto_ces with model fixed, i.e. cesmodel), the mean forecast, and the 80% interval that
# forecast_ces draws from 5,000 perturbed-state paths. For the shorter series it also records the
# 80% interval of 20,000 paths from simulate_ces (the same simulation, more paths), a tighter
# check that our closed-form interval is the one the reference's simulation converges to. A few
# "forward" cases record AutoCES.forward: a fit kept from a shorter history, applied to a longer one.
import csv
import gzip
import json
import math
import os
from collections import defaultdict

import numpy as np
import statsforecast
from statsforecast.ces import auto_ces, forecast_ces, simulate_ces
from statsforecast.models import AutoCES

OUT = "test/fixtures/ces/statsforecast.json"
HOURLY_TAIL = 300


def m4(path, ids, tail=None):
    rows = defaultdict(list)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r["unique_id"] in ids and r["split"] == "train":
                rows[r["unique_id"]].append(float(r["y"]))
    return [(i, rows[i][-tail:] if tail else rows[i]) for i in ids]


def simulated():
    rng = np.random.default_rng(20261124)
    t = np.arange(120)
    # Each position of the cycle its own random walk: the lagged model (S), one complex level per
    # position, wins the AICc (by 31 and 18); with m = 4 the partial model (P) wins.
    seasonal_rw = lambda seed, cycles, m: 30 + np.random.default_rng(seed).normal(0, 1, (cycles, m)).cumsum(axis=0).reshape(-1)
    out = [
        ("sim-seasonal-rw-m12-a", 12, seasonal_rw(4, 10, 12)),
        ("sim-seasonal-rw-m12-b", 12, seasonal_rw(2, 10, 12)),
        ("sim-seasonal-rw-m4", 4, seasonal_rw(2, 30, 4)),
        # A fixed additive season on a random-walk level (P and F within an AICc point or two).
        ("sim-fixed-season-m12", 12, 100 + np.cumsum(rng.normal(0, 1, 120)) + 10 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, 120)),
        # A season whose amplitude grows with the trend: full seasonality (F) by far.
        ("sim-growing-season-m12", 12, 100 + 0.5 * t + (5 + 0.2 * t) * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, 120)),
        # No season in the data although m = 4: the non-seasonal model (N) wins the AICc.
        ("sim-no-season-m4", 4, 20 + np.cumsum(rng.normal(0, 1, 80))),
        # Non-seasonal (m = 1): only N is tried.
        ("sim-random-walk-m1", 1, 50 + np.cumsum(rng.normal(0.3, 1.0, 80))),
        ("sim-trend-down-m1", 1, 200 - 1.5 * np.arange(50) + rng.normal(0, 3, 50)),
        # Fewer than two seasons: N only, whatever m says.
        ("sim-one-season-m12", 12, 10 + 3 * np.sin(2 * np.pi * np.arange(20) / 12) + rng.normal(0, 0.5, 20)),
        # Short series: 8 points (N), and three cycles of 4 (all four tried).
        ("sim-short-n8", 1, np.array([3.0, 4.0, 3.5, 5.0, 4.5, 5.5, 5.2, 6.1])),
        ("sim-short-seasonal-n12", 4, np.array([10, 20, 30, 15] * 3, dtype=float) + np.arange(12)),
    ]
    return [(i, m, np.asarray(y, dtype=float).tolist()) for i, m, y in out]


def num(v):
    v = float(v)
    return None if math.isnan(v) else v


def summary(fit):
    return {
        "par": {k: num(v) for k, v in fit["par"].items()},
        "lik": num(-2 * fit["loglik"]),
        "aic": num(fit["aic"]),
        "aicc": num(fit["aicc"]),
        "bic": num(fit["bic"]),
        "sigma2": num(fit["sigma2"]),
    }


def record(series_id, m, y, h):
    y = np.asarray(y, dtype=float)
    fit = auto_ces(y, m)
    fc = forecast_ces(fit, h, level=[80])
    # AutoCES (the class) gives the same mean and 80% interval: it calls the functions above.
    cls = AutoCES(season_length=m).forecast(y=y, h=h, level=[80])
    assert np.array_equal(cls["mean"], fc["mean"]) and np.array_equal(cls["lo-80"], fc["lo-80"])
    seasonal = m > 1 and len(y) >= 2 * m
    fits = {v: summary(auto_ces(y, m, model=v)) for v in (["N", "S", "P", "F"] if seasonal else ["N"])}
    case = {
        "id": series_id,
        "m": m,
        "h": h,
        "y": y.tolist(),
        "seasontype": fit["seasontype"],
        **summary(fit),
        "fits": fits,
        "mean": fc["mean"].tolist(),
        "lo80": fc["lo-80"].astype(float).tolist(),
        "hi80": fc["hi-80"].astype(float).tolist(),
    }
    if len(y) <= HOURLY_TAIL:
        paths = simulate_ces(fit, h, n_paths=20000, seed=1)
        case["lo80_20k"] = np.quantile(paths, 0.1, axis=0).tolist()
        case["hi80_20k"] = np.quantile(paths, 0.9, axis=0).tolist()
    return case


def forward(series_id, m, y, h, cut):
    # A kept fit (models/families/ces/ces.ts `reuse`): AutoCES fitted on all but the last `cut` points, then
    # `forward` on the whole history (same variant and parameters, states rerun on the new data).
    y = np.asarray(y, dtype=float)
    model = AutoCES(season_length=m).fit(y[:-cut])
    return {
        "id": series_id,
        "m": m,
        "h": h,
        "cut": cut,
        "y": y.tolist(),
        "seasontype": model.model_["seasontype"],
        "par": {k: num(v) for k, v in model.model_["par"].items()},
        "mean": model.forward(y=y, h=h)["mean"].tolist(),
    }


def main():
    cases = []
    for sid, y in m4("datasets/m4-hourly.csv.gz", ["H1", "H5", "H37", "H100", "H150", "H250", "H344", "H400"], tail=HOURLY_TAIL):
        cases.append(record(sid, 24, y, 48))
    for sid, y in m4("datasets/m4-weekly.csv.gz", ["W1", "W20", "W60", "W100", "W180", "W250", "W300", "W359"]):
        cases.append(record(sid, 52, y, 13))
    for sid, m, y in simulated():
        cases.append(record(sid, m, y, 2 * max(m, 4)))
    by_id = {c["id"]: c for c in cases}
    forward_cases = [forward(i, by_id[i]["m"], by_id[i]["y"], by_id[i]["h"], cut) for i, cut in [("H5", 24), ("W100", 13), ("sim-seasonal-rw-m12-a", 12), ("sim-random-walk-m1", 5)]]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"statsforecast": statsforecast.__version__, "cases": cases, "forward": forward_cases}, f, allow_nan=False)
        f.write("\n")
    chosen = defaultdict(list)
    for c in cases:
        chosen[c["seasontype"]].append(c["id"])
    print(f"wrote {len(cases)} cases to {OUT}: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(chosen.items())))


if __name__ == "__main__":
    main()
