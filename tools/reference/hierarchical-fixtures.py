# Reference fixtures for engine/reconciliation/, produced by hierarchicalforecast's reconcilers
# (BottomUp, TopDown, MiddleOut, MinTrace) and its Normality intervals.
#
# Usage (from the project root), in a virtual environment of its own:
#   bash scripts/ensure-hierarchicalforecast.sh   (prints the environment's python)
#   "$(bash scripts/ensure-hierarchicalforecast.sh)" tools/reference/hierarchical-fixtures.py
# Writes test/fixtures/reconciliation/{tree3,tree4,grouped}.json.
#
# Each fixture holds one hierarchy as the beta schema logic describes it (identifier values per
# series, null where a level aggregates one away), seeded synthetic data that both sides read
# alike (base means and standard deviations, the in-sample history and fitted values), and for
# every method hierarchicalforecast's reconciled means and, where it offers them, its Normality
# quantiles; or the error it raises. The reconcilers are called directly with a dense summing
# matrix whose rows are the series in fixture order (coarsest level first, bottoms last).
import json
import os
import sys
from importlib.metadata import version

import numpy as np
from hierarchicalforecast.methods import BottomUp, MiddleOut, MinTrace, TopDown

OUT_DIR = "test/fixtures/reconciliation"
LEVELS = [80, 50]  # hierarchicalforecast's interval levels: quantiles 0.1, 0.25, 0.75, 0.9
HORIZON = 6
OBSERVATIONS = 36
COMMAND = '"$(bash scripts/ensure-hierarchicalforecast.sh)" tools/reference/hierarchical-fixtures.py'


def summing_matrix(series):
    bottoms = [s for s in series if None not in s]
    rows = []
    for s in series:
        rows.append([all(v is None or v == b[i] for i, v in enumerate(s)) for b in bottoms])
    return np.array(rows, dtype=np.float64)


def level_tags(identifiers, series):
    tags = {}
    for i, s in enumerate(series):
        name = "/".join(n for n, v in zip(identifiers, s) if v is not None) or "total"
        tags.setdefault(name, []).append(i)
    return {k: np.array(v) for k, v in tags.items()}


def synthetic(S, rng):
    n, nb = S.shape
    t = np.arange(OBSERVATIONS + HORIZON)
    level = rng.uniform(20, 120, nb)
    season = rng.uniform(0.05, 0.25, nb)
    bottoms = level[:, None] * (1 + season[:, None] * np.sin(2 * np.pi * t / 4 + rng.uniform(0, 6, nb)[:, None]))
    bottoms += rng.normal(0, 2, bottoms.shape)
    y = S @ bottoms
    history = y[:, :OBSERVATIONS]
    # Fitted values: errors with a common factor, so the residuals correlate across series.
    common = rng.normal(0, 3, OBSERVATIONS)
    fitted = history + rng.normal(0, 1, (n, OBSERVATIONS)) * np.sqrt(S.sum(axis=1))[:, None] + 0.5 * common
    # Base forecasts: the truth plus independent errors, so they are not coherent.
    mean = y[:, OBSERVATIONS:] + rng.normal(0, 1, (n, HORIZON)) * np.sqrt(S.sum(axis=1))[:, None] * 2
    sd = np.sqrt(S.sum(axis=1))[:, None] * (1.5 + 0.2 * np.arange(HORIZON))[None, :] * rng.uniform(0.8, 1.2, (n, 1))
    return history, fitted, mean, sd


def methods(middle_level):
    out = [({"method": "bottom_up"}, lambda: BottomUp(), False)]
    for p in ["forecast_proportions", "average_proportions", "proportion_averages"]:
        out.append(({"method": "top_down", "proportions": p}, lambda p=p: TopDown(method=p), True))
    if middle_level is not None:
        for p in ["forecast_proportions", "average_proportions", "proportion_averages"]:
            spec = {"method": "middle_out", "middle_level": middle_level, "proportions": p}
            out.append((spec, lambda p=p: MiddleOut(middle_level="/".join(middle_level), top_down_method=p), True))
    for e in ["ols", "wls_struct", "wls_var", "mint_shrink", "mint_cov"]:
        out.append(({"method": "min_trace", "estimator": e}, lambda e=e: MinTrace(method=e), False))
    return out


def run(spec, make, needs_tags, S, tags, history, fitted, mean, sd):
    # hierarchicalforecast offers Normality intervals for every method but forecast proportions.
    probabilistic = spec.get("proportions") != "forecast_proportions"
    kwargs = dict(S=S, y_hat=mean, y_insample=history, y_hat_insample=fitted, sigmah=sd)
    if probabilistic:
        kwargs.update(level=LEVELS, intervals_method="normality")
    if needs_tags or spec["method"] == "bottom_up":
        kwargs["tags"] = tags
    try:
        res = make().fit_predict(**kwargs)
    except Exception as e:  # the refusal is the fixture
        return {"spec": spec, "error": f"{type(e).__name__}: {e}"}
    case = {"spec": spec, "mean": res["mean"].tolist()}
    if probabilistic:
        case["quantiles"] = np.transpose(res["quantiles"], (0, 2, 1)).tolist()  # series x level x step
    return case


def fixture(name, identifiers, series, middle_level, seed):
    S = summing_matrix(series)
    tags = level_tags(identifiers, series)
    history, fitted, mean, sd = synthetic(S, np.random.default_rng(seed))
    cases = [run(spec, make, needs_tags, S, tags, history, fitted, mean, sd) for spec, make, needs_tags in methods(middle_level)]
    quantile_levels = sorted({(100 - lv) / 200 for lv in LEVELS} | {(100 + lv) / 200 for lv in LEVELS})
    return {
        "command": COMMAND,
        "hierarchicalforecast": version("hierarchicalforecast"),
        "numpy": np.__version__,
        "name": name,
        "identifiers": identifiers,
        "series": [list(s) for s in series],
        "quantile_levels": quantile_levels,
        "mean": mean.tolist(),
        "sd": sd.tolist(),
        "history": history.tolist(),
        "fitted": fitted.tolist(),
        "cases": cases,
    }


def tree3():
    # Three levels: the total, 3 regions, 7 stores (2, 3 and 2 per region).
    stores = {"north": ["n1", "n2"], "south": ["s1", "s2", "s3"], "west": ["w1", "w2"]}
    series = [(None, None)] + [(r, None) for r in stores] + [(r, s) for r, ss in stores.items() for s in ss]
    return fixture("tree3", ["region", "store"], series, ["region"], 20261201)


def tree4():
    # Four levels: the total, 2 states, 5 regions, 12 stores; middle_out at the regions.
    shape = {"A": {"A1": 3, "A2": 2, "A3": 2}, "B": {"B1": 3, "B2": 2}}
    series = [(None, None, None)]
    series += [(s, None, None) for s in shape]
    series += [(s, r, None) for s, rs in shape.items() for r in rs]
    series += [(s, r, f"{r}-{k}") for s, rs in shape.items() for r, count in rs.items() for k in range(count)]
    return fixture("tree4", ["state", "region", "store"], series, ["state", "region"], 20261202)


def grouped():
    # Crossed: 3 states x 2 genders; the total, each state, each gender, and the 6 bottoms.
    states, genders = ["NSW", "QLD", "VIC"], ["F", "M"]
    series = [(None, None)] + [(s, None) for s in states] + [(None, g) for g in genders]
    series += [(s, g) for s in states for g in genders]
    return fixture("grouped", ["state", "gender"], series, None, 20261203)


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for fx in [tree3(), tree4(), grouped()]:
        path = os.path.join(OUT_DIR, f"{fx['name']}.json")
        with open(path, "w") as f:
            json.dump(fx, f)
        errors = [c["spec"] for c in fx["cases"] if "error" in c]
        print(f"{path}: {len(fx['cases'])} cases, errors for {errors}", file=sys.stderr)


if __name__ == "__main__":
    main()
