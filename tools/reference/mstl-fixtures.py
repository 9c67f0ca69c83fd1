# Reference fixtures for the `mstl` model (models/families/mstl/mstl.ts, models/families/mstl/mstl-decomposition.ts), produced by
# statsforecast's `mstl` decomposition and its MSTL model's seasonal forecast.
#
# Usage (from the project root), in a virtual environment of its own:
#   "$(bash scripts/ensure-statsforecast.sh)" tools/reference/mstl-fixtures.py
# Writes test/fixtures/mstl/statsforecast.json.
#
# For every series it records the trend, each seasonal component, the deseasonalised series the
# trend model is fitted on (trend + remainder), and the seasonal part of the forecast (each
# component's last cycle repeated). The trend model's own forecast is aets's, tested elsewhere.
import csv
import gzip
import json
import os
from collections import defaultdict

import numpy as np
import statsforecast
from statsforecast.models import MSTL, _predict_mstl_seas
from statsforecast.mstl import mstl

OUT = "test/fixtures/mstl/statsforecast.json"


def m4(path, ids, last):
    rows = defaultdict(list)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r["unique_id"] in ids and r["split"] == "train":
                rows[r["unique_id"]].append(float(r["y"]))
    return [(i, rows[i][-last:]) for i in ids]


def simulated():
    rng = np.random.default_rng(20261123)
    t = np.arange(24 * 7 * 5)
    daily = 10 * np.sin(2 * np.pi * t / 24)
    weekly = 6 * np.cos(2 * np.pi * t / 168)
    return [
        # Two seasonalities on a trend: both components recovered.
        ("sim-hourly-two-seasons", [24, 168], 100 + 0.05 * t + daily + weekly + rng.normal(0, 1, t.size)),
        # Three periods, given unsorted: sorted, windows 11, 15, 19.
        ("sim-three-periods", [12, 4, 30], 50 + 5 * np.sin(2 * np.pi * np.arange(200) / 4) + 3 * np.sin(2 * np.pi * np.arange(200) / 12) + rng.normal(0, 0.5, 200)),
        # One period: a single STL pass.
        ("sim-monthly-one-period", [12], 200 + np.cumsum(rng.normal(0, 1, 96)) + 20 * np.sin(2 * np.pi * np.arange(96) / 12)),
        # An odd period: statsmodels' low-pass window is the period plus 2.
        ("sim-odd-period", [7], 30 + 4 * np.sin(2 * np.pi * np.arange(70) / 7) + rng.normal(0, 0.3, 70)),
    ]


def record(series_id, periods, y, h):
    y = np.asarray(y, dtype=float)
    decomposition = mstl(y, periods if len(periods) > 1 else periods[0])
    seasonal_columns = [c for c in decomposition.columns if c.startswith("seasonal")]
    model = MSTL(season_length=periods).fit(y)
    return {
        "id": series_id,
        "periods": periods,
        "h": h,
        "y": y.tolist(),
        "trend": decomposition["trend"].tolist(),
        "seasonals": [decomposition[c].tolist() for c in seasonal_columns],
        "adjusted": (decomposition["trend"] + decomposition["remainder"]).tolist(),
        "seasonal_forecast": _predict_mstl_seas(model.model_, h=h, season_length=model.season_length).tolist(),
    }


def main():
    cases = []
    for sid, y in m4("datasets/m4-hourly.csv.gz", ["H1", "H150", "H300"], 24 * 7 * 4):
        cases.append(record(sid, [24, 168], y, 48))
    for sid, y in m4("datasets/m4-weekly.csv.gz", ["W20"], 260):
        cases.append(record(sid, [52], y, 13))
    for sid, periods, y in simulated():
        cases.append(record(sid, periods, y, 2 * max(periods)))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"statsforecast": statsforecast.__version__, "cases": cases}, f)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
