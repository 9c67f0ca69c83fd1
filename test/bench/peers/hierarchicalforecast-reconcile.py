# hierarchicalforecast's reconcilers on the reconciliation benchmark's own inputs, timed: the peer
# of `npm run bench -- reconciliation`. Run by test/bench/reconciliation.ts with the Python of
# scripts/ensure-hierarchicalforecast.sh, never by hand:
#   python hierarchicalforecast-reconcile.py DIR
# DIR holds meta.json (series count, bottoms, horizon, observations, each aggregate's bottoms,
# level tags, the methods, and whether to use the sparse reconcilers) and little-endian float64
# files mean.f64 (n x h), history.f64 and residuals.f64 (n x T), rows aggregates first, bottoms
# last. Writes DIR/out.json: seconds per method (the median of `repeats` fit_predict calls, means
# only) or its error, and
# DIR/<i>.f64 with the means of method i, for the benchmark to compare with its own.
import json
import os
import resource
import sys
import time
from importlib.metadata import version

import numpy as np
from scipy import sparse
from hierarchicalforecast import methods as hf


def reconciler(spec, use_sparse, tags):
    method = spec["method"]
    if method == "bottom_up":
        return hf.BottomUpSparse() if use_sparse else hf.BottomUp()
    if method == "top_down":
        return (hf.TopDownSparse if use_sparse else hf.TopDown)(method=spec["proportions"])
    if method == "middle_out":
        cls = hf.MiddleOutSparse if use_sparse else hf.MiddleOut
        return cls(middle_level="/".join(spec["middle_level"]) or "total", top_down_method=spec["proportions"])
    if use_sparse:
        return hf.MinTraceSparse(method=spec["estimator"])
    return hf.MinTrace(method=spec["estimator"])


def main():
    folder = sys.argv[1]
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    n, nb, h, T = meta["n"], meta["bottoms"], meta["horizon"], meta["observations"]
    a = n - nb
    rows, cols = [], []
    for j, members in enumerate(meta["aggregates"]):
        rows += [j] * len(members)
        cols += members
    rows += list(range(a, n))
    cols += list(range(nb))
    S = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, nb))
    use_sparse = meta["sparse"]
    if not use_sparse:
        S = S.toarray()
    tags = {k: np.array(v) for k, v in meta["tags"].items()}
    mean = np.fromfile(os.path.join(folder, "mean.f64")).reshape(n, h)
    history = np.fromfile(os.path.join(folder, "history.f64")).reshape(n, T)
    residuals = np.fromfile(os.path.join(folder, "residuals.f64")).reshape(n, T)
    fitted = history - residuals
    out = {"hierarchicalforecast": version("hierarchicalforecast"), "sparse": use_sparse, "methods": []}
    for i, spec in enumerate(meta["methods"]):
        try:
            model = reconciler(spec, use_sparse, tags)
            kwargs = dict(S=S, y_hat=mean, y_insample=history, y_hat_insample=fitted)
            if spec["method"] in ("top_down", "middle_out"):
                kwargs["tags"] = tags
            times = []
            for _ in range(meta.get("repeats", 1)):
                start = time.perf_counter()
                res = model.fit_predict(**kwargs)
                times.append(time.perf_counter() - start)
            seconds = sorted(times)[len(times) // 2]
            np.ascontiguousarray(res["mean"], dtype=np.float64).tofile(os.path.join(folder, f"{i}.f64"))
            out["methods"].append({"seconds": seconds})
        except Exception as e:  # reported beside our figures
            out["methods"].append({"error": f"{type(e).__name__}: {str(e)[:200]}"})
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(os.path.join(folder, "out.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
