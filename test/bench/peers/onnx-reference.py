"""The reference PyTorch pipelines for test/bench/onnx.ts: the same network as an ONNX export,
rebuilt by the export module's own builder, checked against the fixture's reference.json, then
timed on the benchmark's series.

Usage: python onnx-reference.py <request.json> <response.json>, then on stdin "time <batch size>"
lines (each answered on stdout by a line "@@onnx-reference seconds <s>") and "done".

The request (written by test/bench/onnx.ts):
  model       the service's model name (chronos-2, timesfm-2p5, timesfm-2, ...)
  module      the export module in tools/export/ that builds it (chronos2, timesfm2p5, ...)
  reference_module  the module with reference_forecast (a later model's; often `module`)
  size        "tiny" (tiny_model(seed), a committed fixture) or "base" (base_size_model(seed))
  seed        the seed the export was built with (from its manifest's version)
  manifest    the export's manifest.json, parsed (context length and the like)
  reference   the fixture's reference.json path, or null (base-size exports record none)
  histories   the series, [series][step]; horizon; quantiles (levels, in the order to return)
  batch_sizes the pipeline's batch sizes to warm up (series, or Chronos-2's rows, per batch)
  threads     torch's intra-op threads

Once checked and warm it prints "@@onnx-reference ready <identity>". The response file: versions,
identity (the reference.json check: cases, values, worst relative error), mean [series][step]
and quantiles [series][level][step] (of the last timed run).

The check comes first and fails loudly: the timings are only worth comparing if this is the
network the ONNX file was exported from. The pipeline is called once on the whole set at each
batch size before timing (imports, allocations, lazy initialisation out of the figures), as the
adapter is.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

EXPORT_DIR = Path(__file__).resolve().parents[3] / "tools" / "export"
sys.path.insert(0, str(EXPORT_DIR))

import torch  # noqa: E402

from common import package_versions  # noqa: E402

# (histories, horizon, levels) -> (mean [n, h], quantiles [n, len(levels), h])
Forecast = Callable[[list[np.ndarray], int, list[float]], tuple[np.ndarray, np.ndarray]]
# a reference.json case -> its recorded arrays recomputed, {key: [series] values}: a plain key is
# one of the case's "expected" records ("point", "quantiles"), a dotted one its path in the case
# ("first_patch.quantiles"; "expected." the whole "expected"); empty for a case the check skips
# (covariates)
Recompute = Callable[[dict[str, Any]], dict[str, Any]]

TOLERANCE = 1e-4
MARK = "@@onnx-reference "


def as_array(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float32)


def channels_at(levels: list[float], model_levels: list[float], channels: np.ndarray) -> np.ndarray:
    """TimesFM's output channels ([n, h, 1 + levels], channel 0 the mean) at the requested
    levels, which must be the model's own (the reference returns no others)."""
    index = []
    for q in levels:
        hits = [k for k, level in enumerate(model_levels) if abs(level - q) < 1e-9]
        if not hits:
            raise SystemExit(f"level {q} is not one of the model's {model_levels}; the reference returns only those")
        index.append(hits[0] + 1)
    return np.transpose(channels[:, :, index], (0, 2, 1))


def chronos2(family: Any, model: Any, request: dict[str, Any]) -> tuple[Forecast, Recompute]:
    """Chronos2Pipeline.predict_quantiles (chronos-forecasting 2.3), the entry point reference.json
    was recorded with; batch_size is the pipeline's own argument (rows per batch)."""
    from chronos.chronos2 import Chronos2Pipeline

    pipeline = Chronos2Pipeline(model)

    def forecast(histories: list[np.ndarray], horizon: int, levels: list[float]) -> tuple[np.ndarray, np.ndarray]:
        inputs = [torch.from_numpy(h) for h in histories]
        quantiles, mean = pipeline.predict_quantiles(inputs, prediction_length=horizon, quantile_levels=levels, batch_size=request["batch_size"])
        # per series: quantiles [1, h, L], mean [1, h]
        return np.stack([m[0].numpy() for m in mean]), np.stack([q[0].numpy().T for q in quantiles])

    def recompute(case: dict[str, Any]) -> dict[str, Any]:
        if any("covariates" in s for s in case["series"]):
            return {}
        inputs = [torch.from_numpy(as_array(s["target"])) for s in case["series"]]
        quantiles, mean = pipeline.predict_quantiles(
            inputs, prediction_length=case["horizon"], quantile_levels=case["quantiles"], cross_learning=case["cross_learning"]
        )
        return {"quantiles": [q[0].numpy().T for q in quantiles], "mean": [m[0].numpy() for m in mean]}

    return forecast, recompute


def timesfm2p5(family: Any, model: Any, request: dict[str, Any]) -> tuple[Forecast, Recompute]:
    """TimesFM_2p5_200M_torch.forecast (timesfm 3.0), compiled by the export module's compile_for
    with the manifest's max_context and the README's flags; per_core_batch_size = batch_size."""
    from timesfm.timesfm_2p5 import timesfm_2p5_torch

    d = family.definition_of(model)
    api = timesfm_2p5_torch.TimesFM_2p5_200M_torch(torch_compile=False)
    api.model = model
    max_context = request["manifest"]["context_length"]
    model_levels = list(d.quantiles)
    compiled: dict[str, Any] = {}

    def compile_once(horizon: int, batch: int) -> None:
        # Compiling builds the decode function; done once per shape, outside the timing.
        if compiled.get("key") != (horizon, batch):
            family.compile_for(api, d, horizon, max_context, batch)
            compiled["key"] = (horizon, batch)

    def forecast(histories: list[np.ndarray], horizon: int, levels: list[float]) -> tuple[np.ndarray, np.ndarray]:
        compile_once(horizon, request["batch_size"])
        point, channels = api.forecast(horizon=horizon, inputs=histories)
        return np.asarray(point), channels_at(levels, model_levels, np.asarray(channels))

    def recompute(case: dict[str, Any]) -> dict[str, Any]:
        if "xreg" in case:
            return {}
        compile_once(case["horizon"], len(case["series"]))
        point, channels = api.forecast(horizon=case["horizon"], inputs=[as_array(s["target"]) for s in case["series"]])
        return {"point": list(point), "quantiles": [q.T for q in channels]}

    return forecast, recompute


def timesfm2(family: Any, model: Any, request: dict[str, Any]) -> tuple[Forecast, Recompute]:
    """TimesFmTorch.forecast (timesfm 1.3, PyTorch), built by the export module's api_for with its
    hparams (context = the manifest's, per_core_batch_size = batch_size), frequency class 0 (the
    reference's default, hourly)."""
    max_context = request["manifest"]["context_length"]
    tiny = request["size"] == "tiny"
    model_levels = list(model.config.quantiles)

    apis: dict[tuple[int, int], Any] = {}

    def run(histories: list[np.ndarray], horizon: int, batch: int, freq: list[int]) -> tuple[np.ndarray, np.ndarray]:
        # The API object is built once per horizon and batch size, outside the timing.
        if (horizon, batch) not in apis:
            apis[(horizon, batch)] = family.api_for(model, family.hparams(max_context, horizon, tiny=tiny, batch=batch))
        point, full = apis[(horizon, batch)].forecast(histories, freq=freq)
        return np.asarray(point), np.asarray(full)

    def forecast(histories: list[np.ndarray], horizon: int, levels: list[float]) -> tuple[np.ndarray, np.ndarray]:
        point, full = run(histories, horizon, request["batch_size"], [0] * len(histories))
        return point, channels_at(levels, model_levels, full)

    def recompute(case: dict[str, Any]) -> dict[str, Any]:
        if "xreg" in case:
            return {}
        point, full = run([as_array(s["target"]) for s in case["series"]], case["horizon"], len(case["series"]), case["freq"])
        return {"point": list(point), "quantiles": [q.T for q in full]}

    return forecast, recompute


def from_export_module(family: Any, model: Any, request: dict[str, Any]) -> tuple[Forecast, Recompute]:
    """A model whose export module has `reference_forecast(model, histories, horizon, ...)`: its
    reference pipeline on a batch of series, returning the quantiles [n, levels, h] at the model's
    levels (the module's QUANTILES, else the manifest's), alone (the point is the median) or with
    the point [n, h], as a (point, quantiles, ...) tuple or a {"mean", "quantiles"} dict. `batch_size`
    and `context_length` (the manifest's) are passed when the function takes them. A point model
    (one level, the median: reverso) may return the point [n, h] alone; the reference's sample
    forecast repeats it as every sample, so every quantile is the point, as the service answers.
    The reference.json check recomputes the cases of targets alone with the default settings, or
    calls the module's `reference_check(model, case)` where it has one (its records' paths in the
    case, or the case's whole "expected" list)."""
    model_levels = [float(q) for q in getattr(family, "QUANTILES", None) or request["manifest"]["quantile_levels"]]
    parameters = inspect.signature(family.reference_forecast).parameters

    def call(histories: list[np.ndarray], horizon: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
        extra: dict[str, Any] = {}
        if "batch_size" in parameters:
            extra["batch_size"] = batch
        if "context_length" in parameters:
            extra["context_length"] = request["manifest"]["context_length"]
        out = family.reference_forecast(model, histories, horizon, **extra)
        if isinstance(out, dict):
            point, quantiles = out.get("mean", out.get("point")), out["quantiles"]
        elif isinstance(out, tuple):
            point, quantiles = out[0], out[1]  # anything after them (e.g. the forecast objects) is unused
        else:
            point, quantiles = None, out
        quantiles = np.asarray(quantiles, dtype=np.float64)
        if quantiles.ndim == 2 and len(model_levels) == 1:
            quantiles = quantiles[:, None, :]
        if quantiles.shape[1] != len(model_levels):
            raise SystemExit(f"reference_forecast gave {quantiles.shape[1]} quantile levels, the model has {len(model_levels)}")
        if point is None:
            point = quantiles[:, model_levels.index(0.5)]
        return np.asarray(point, dtype=np.float64), quantiles

    def forecast(histories: list[np.ndarray], horizon: int, levels: list[float]) -> tuple[np.ndarray, np.ndarray]:
        point, quantiles = call(histories, horizon, request["batch_size"])
        if len(model_levels) == 1:
            return point, np.repeat(point[:, None, :], len(levels), axis=1)
        # channels_at reads channel k + 1 for the model's level k: the point goes in front.
        channels = np.concatenate([point[:, :, None], np.transpose(quantiles, (0, 2, 1))], axis=2)
        return point, channels_at(levels, model_levels, channels)

    if hasattr(family, "reference_check"):
        # The module recomputes its own records (e.g. a sampling model's deterministic part).
        check_parameters = inspect.signature(family.reference_check).parameters
        context = {"context_length": request["manifest"]["context_length"]} if "context_length" in check_parameters else {}

        def module_check(case: dict[str, Any]) -> dict[str, Any]:
            got = family.reference_check(model, case, **context)
            return {"expected.": got} if isinstance(got, list) else got  # a list: the case's whole "expected"

        return forecast, module_check

    def recompute(case: dict[str, Any]) -> dict[str, Any]:
        # Only cases the call can reproduce: targets alone, no per-case options (a case's other
        # settings, such as a changed forecast_config, are the module's own to apply).
        if set(case) - {"name", "horizon", "levels", "series", "expected"} or any(set(s) != {"target"} for s in case["series"]):
            return {}
        histories = [as_array(s["target"]) for s in case["series"]]
        point, quantiles = call(histories, case["horizon"], len(histories))
        levels = case.get("levels") or model_levels
        picked = [model_levels.index(min(model_levels, key=lambda m: abs(m - q))) for q in levels]
        out: dict[str, Any] = {"quantiles": list(quantiles[:, picked])}
        for key in ("point", "mean"):
            if key in case["expected"]:
                out[key] = list(point)
        return out

    return forecast, recompute


PIPELINES = {"chronos-2": chronos2, "timesfm-2p5": timesfm2p5, "timesfm-2": timesfm2}


def worst_error(got: Any, expected: Any, floor: float) -> tuple[float, int]:
    """Largest |got - expected| / max(|expected|, floor) and the number of values compared."""
    g = np.asarray(got, dtype=np.float64).ravel()
    e = np.asarray([np.nan if v is None else v for v in np.asarray(expected, dtype=object).ravel()], dtype=np.float64)
    if g.shape != e.shape:
        raise SystemExit(f"shape mismatch: got {g.shape}, reference {e.shape}")
    err = np.abs(g - e) / np.maximum(np.abs(e), floor)
    return (math.inf if np.isnan(err).any() else float(err.max(initial=0.0))), g.size


def check_identity(recompute: Recompute, reference_path: str) -> dict[str, Any]:
    """Recomputes the fixture's recorded cases (those without covariates) and compares them with
    reference.json, relative to each series' level as the parity tests do."""
    reference = json.loads(Path(reference_path).read_text())
    cases, values, worst, failed = [], 0, 0.0, []
    for case in reference["cases"]:
        got = recompute(case)
        if not got:
            continue
        cases.append(case["name"])
        case_worst = 0.0
        for key, per_series in got.items():
            expected = case
            for part in key.split(".") if "." in key else ("expected", key):
                expected = expected[part] if part else expected
            for i, series_values in enumerate(per_series):
                target = as_array(case["series"][i]["target"])
                observed = target[~np.isnan(target)]
                floor = max(float(np.mean(np.abs(observed))) if observed.size else 0.0, 1e-6)
                err, n = worst_error(series_values, expected[i], floor)
                values += n
                case_worst = max(case_worst, err)
        worst = max(worst, case_worst)
        if not case_worst < TOLERANCE:
            failed.append(f"{case['name']} {case_worst:.2e}")
    if not cases:
        raise SystemExit("no case of reference.json could be recomputed: the identity of the network is unchecked")
    if failed:
        raise SystemExit(f"the rebuilt model does not reproduce {reference_path} (worst relative error per case: {', '.join(failed)}): not the same network")
    return {"cases": cases, "values": values, "worst": worst}


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit("usage: python onnx-reference.py <request.json> <response.json>")
    request = json.loads(Path(argv[0]).read_text())
    torch.set_num_threads(request["threads"])
    torch.set_num_interop_threads(1)
    torch.manual_seed(request["seed"])
    family = importlib.import_module(request["module"])
    with torch.no_grad():
        model = (family.tiny_model if request["size"] == "tiny" else family.base_size_model)(request["seed"])
        if request["model"] in PIPELINES:
            forecast, recompute = PIPELINES[request["model"]](family, model, request)
        else:
            forecast, recompute = from_export_module(importlib.import_module(request["reference_module"]), model, request)
        identity = check_identity(recompute, request["reference"]) if request["reference"] else None

        histories = [np.asarray(h, dtype=np.float32) for h in request["histories"]]
        horizon, levels = request["horizon"], request["quantiles"]
        for batch in request["batch_sizes"]:
            request["batch_size"] = batch
            forecast(histories, horizon, levels)  # warm-up on the whole set, untimed

        # Timed runs on request, so that the benchmark interleaves them with the adapter's and a
        # busier moment of a shared machine hits both alike: "time <batch size>" runs the whole
        # set once and answers its seconds; "done" ends. Answers are marked lines on stdout
        # (packages print there too).
        mark(f"ready {json.dumps(identity)}")
        mean = quantiles = None
        for line in sys.stdin:
            command = line.split()
            if not command or command[0] == "done":
                break
            request["batch_size"] = int(command[1])
            started = time.perf_counter()
            mean, quantiles = forecast(histories, horizon, levels)
            mark(f"seconds {time.perf_counter() - started:.9f}")
        if mean is None:
            mean, quantiles = forecast(histories, horizon, levels)

    versions = package_versions("torch", "numpy", "chronos-forecasting", "transformers", "timesfm", "uni2ts", "gluonts", "toto-2", "granite-tsfm")
    Path(argv[1]).write_text(json.dumps({
        "versions": {"python": sys.version.split()[0], **versions},
        "threads": torch.get_num_threads(),
        "identity": identity,
        "mean": np.asarray(mean, dtype=np.float64).tolist(),
        "quantiles": np.asarray(quantiles, dtype=np.float64).tolist(),
    }))


def mark(message: str) -> None:
    sys.stdout.write(f"{MARK}{message}\n")
    sys.stdout.flush()

if __name__ == "__main__":
    main(sys.argv[1:])
