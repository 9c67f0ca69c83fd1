"""TabICL (PyPI `tabicl` 2.2.0) for the forecasting service: its forecasting pipeline
`tabicl.forecast.TabICLForecaster` over the `TabICLRegressor`.

The pipeline turns a series into a table: one row per observed history step (the training rows,
target = the value) and one per horizon step (the test rows), with feature columns of the known
covariates, a running index, calendar features and sin/cos of the FFT-detected periods. The
regressor learns the target from the training rows in context and predicts 999 quantiles per
test row. Not a roll-out: every horizon step is a test row of one pass.

Exported here: the network (`TabICL`: column-wise embedding, row-wise interaction, in-context
learning, quantile decoder) on prepared tables, returning the raw quantiles of the test rows. The
featurisation, the regressor's preprocessing (target scaling, imputation, constant-column filter,
feature scaling, outlier clipping) and the quantile distribution (sorting, linear interpolation,
exponential tails) are the service adapter's (models/families/foundation/tabicl.ts).

The adapter implements the regressor's default ensemble (8 members: Latin-square feature orders
drawn with Python's `random` seeded by random_state 42, half of them Yeo-Johnson transformed);
the manifest records it, and the reference runs `TabICLRegressor` with its defaults.
"""

from __future__ import annotations

import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import clean_onnx, ensure_dir, feature_table_cases, hourly_series, layer_norm_scales_near_one_, package_versions, randomize_, seasonal_maker, to_json_array, write_manifest, write_reference, ONNX_FILE, OPSET  # noqa: E402

MODEL_NAME = "tabicl"
# TabICLRegressor's ensemble defaults (tabicl 2.2.0), which the adapter implements and the reference
# is run with (plus the local checkpoint and the CPU).
REGRESSOR = {"n_estimators": 8, "norm_methods": ["none", "power"], "feat_shuffle_method": "latin", "outlier_threshold": 4.0, "random_state": 42}
# TabICLForecaster's defaults (tabicl 2.2.0): max_context_length 4096, features index, datetime, periodic.
DEFAULT_CONTEXT = 4096
TINY_CONTEXT = 48
# The pipeline's default output levels; any level is served through the distribution's icdf.
QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
TINY_CONFIG = dict(
    max_classes=0, num_quantiles=999, embed_dim=16, col_num_blocks=1, col_nhead=2, col_num_inds=8,
    row_num_blocks=1, row_nhead=2, row_num_cls=2, icl_num_blocks=2, icl_nhead=2, ff_factor=2,
)


def _build(config: dict[str, Any], context: int) -> torch.nn.Module:
    from tabicl._model.tabicl import TabICL

    model = TabICL(**config)
    model.eval()
    model.checkpoint_config = dict(config)  # what TabICLRegressor._load_model rebuilds it from
    model.forecast_context = context
    return model


def tiny_model(seed: int) -> torch.nn.Module:
    """TabICL's own code in a tiny regression configuration, fixed random weights (999 quantiles as released)."""
    model = _build(TINY_CONFIG, TINY_CONTEXT)
    _randomize(model, seed)
    return model


def base_size_model(seed: int) -> torch.nn.Module:
    """TabICL's default configuration as a regressor, random weights: for speed measurements only."""
    model = _build({"max_classes": 0}, DEFAULT_CONTEXT)
    _randomize(model, seed)
    return model


def _randomize(model: torch.nn.Module, seed: int) -> None:
    """common.randomize_, then every LayerNorm scale ~ N(1, 0.1): TabICL's norms (norm1, ln, ...)
    escape randomize_'s name patterns, and scales near 0 would make the outputs nearly constant
    across rows, a weak test of the featurisation."""
    randomize_(model, seed)
    layer_norm_scales_near_one_(model, seed + 1)


def load_checkpoint(path: str) -> torch.nn.Module:
    """A TabICL regressor checkpoint (e.g. tabicl-regressor-v2-20260212.ckpt: {"config", "state_dict"})."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    if checkpoint["config"].get("max_classes", 10) != 0:
        raise SystemExit(f"{path} is a classifier checkpoint (max_classes > 0); forecasting needs the regressor's")
    model = _build(checkpoint["config"], DEFAULT_CONTEXT)
    model.load_state_dict(checkpoint["state_dict"])
    return model


class RawQuantiles(torch.nn.Module):
    """TabICL's forward on prepared tables, [tables, rows, columns] with the training targets
    [tables, train rows]: the raw quantiles [tables, test rows, num_quantiles] of the rows after
    the training ones. The package's own modules in order, as `TabICL._train_forward` chains them
    (the path without InferenceManager's memory-driven batching, which traces to a fixed shape);
    checked against `TabICL._inference_forward`, the path `predict_stats` takes."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, features: torch.Tensor, train_targets: torch.Tensor) -> torch.Tensor:
        embeddings = self.model.col_embedder._train_forward(features, train_targets, None, False)
        rows = self.model.row_interactor._train_forward(embeddings, None)
        out = self.model.icl_predictor._icl_predictions(rows, train_targets)
        return out[:, train_targets.shape[1]:]


def _traced_logn(n: Any, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """ssmax._logn as graph operations: the package computes log(max(n, 1)) in Python, which a
    trace would freeze at the example's source length."""
    return torch.log(torch.clamp(torch.as_tensor(n, dtype=torch.float32, device=device), min=1.0)).to(dtype)


def _embeddings_for_export(self: Any, features: torch.Tensor, train_size: int, y_train: torch.Tensor | None = None, embed_with_test: bool = False) -> torch.Tensor:
    """ColEmbedding._compute_embeddings (tabicl 2.2.0) on the regressor's path (target-aware,
    max_classes 0), with the training rows' target embedding added by a Concat of the two row
    ranges instead of the package's indexed assignment `src[..., :train_size, :] = ... + y_emb`:
    the same sums, but the trace writes that assignment as a ScatterND with a 4-part int64 index
    of every element (Expand, Concat and ScatterND: 15% of one released-size call at
    4,096 rows). check_onnx compares the graph with the package's own inference path."""
    if not self.target_aware or self.max_classes != 0 or y_train is None:
        raise SystemExit("the export's column embedding is the regressor's (target-aware, max_classes 0)")
    src = self.in_linear(features)
    y_emb = self.y_encoder(y_train.unsqueeze(-1))
    src = torch.cat([src[..., :train_size, :] + y_emb, src[..., train_size:, :]], dim=-2)
    src = self.tf_col(src, train_size=None if embed_with_test else train_size)
    if self.affine:
        return features * self.ln_w(self.out_w(src)) + self.ln_b(self.out_b(src))
    return src


def export(model: torch.nn.Module, out_dir: Path, version: str, source: str) -> Path:
    import tabicl._model.ssmax as ssmax

    started = time.time()
    folder = ensure_dir(out_dir / MODEL_NAME)
    rope = model.row_interactor.tf_row.rope
    # The rotary embedding caches its frequencies at the first length it sees; without the cache
    # they are computed from the sequence, so the graph takes any number of columns.
    rope.cache_if_possible = False
    rope.tmp_store("cached_freqs", None)
    network = RawQuantiles(model).eval()
    rng = np.random.default_rng(0)
    example = (torch.tensor(rng.normal(size=(2, 40, 7)), dtype=torch.float32), torch.tensor(rng.normal(size=(2, 30)), dtype=torch.float32))
    raw = folder / "model.raw.onnx"
    original = ssmax._logn
    ssmax._logn = _traced_logn
    embedder = model.col_embedder
    embedder._compute_embeddings = types.MethodType(_embeddings_for_export, embedder)
    try:
        with torch.no_grad():
            torch.onnx.export(
                network, example, str(raw), input_names=["features", "train_targets"], output_names=["raw_quantiles"],
                dynamic_axes={"features": {0: "tables", 1: "rows", 2: "columns"}, "train_targets": {0: "tables", 1: "train_rows"}, "raw_quantiles": {0: "tables", 1: "test_rows"}},
                opset_version=OPSET, dynamo=False,
            )
    finally:
        ssmax._logn = original
        del embedder._compute_embeddings  # the package's own method again (the reference runs it)
    clean_onnx(raw, folder / ONNX_FILE)
    raw.unlink()
    check_onnx(model, folder / ONNX_FILE)
    print(f"exported {MODEL_NAME} in {time.time() - started:.0f} s")
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": model.forecast_context,
        "patch_size": 1,
        "quantile_levels": QUANTILES,
        "point_output": "mean",
        "covariates": ["future"],
        "num_quantiles": model.num_quantiles,
        "regressor": REGRESSOR,
        "temporal_features": ["index", "datetime", "periodic"],
        "periodic": {"max_top_k": 5, "detrend_type": "linear", "zero_padding_factor": 2, "magnitude_threshold": 0.05},
        "exported_with": package_versions("torch", "onnx", "tabicl", "numpy", "pandas", "scikit-learn", "scipy", "statsmodels"),
    })


def check_onnx(model: torch.nn.Module, path: Path) -> None:
    """The graph against the package's inference path, at table shapes other than the example's."""
    import onnxruntime as ort

    from tabicl import InferenceConfig

    # The regressor's configuration on the CPU: float32 throughout (use_amp "auto" is off there).
    config = InferenceConfig()
    config.update_from_dict({part: {"device": "cpu", "use_amp": False, "use_fa3": False} for part in ("COL_CONFIG", "ROW_CONFIG", "ICL_CONFIG")})
    session = ort.InferenceSession(str(path))
    rng = np.random.default_rng(1)
    worst = 0.0
    for tables, rows, columns, train in ((1, 100, 3, 90), (3, 20, 12, 5), (1, 300, 30, 250), (4, 9, 1, 4)):
        x = rng.normal(size=(tables, rows, columns)).astype(np.float32)
        y = rng.normal(size=(tables, train)).astype(np.float32)
        got = session.run(None, {"features": x, "train_targets": y})[0]
        with torch.no_grad():
            want = model._inference_forward(torch.from_numpy(x), torch.from_numpy(y), inference_config=config).numpy()
        worst = max(worst, float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-6)))
    print(f"ONNX against TabICL._inference_forward: max relative error {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("the exported graph does not reproduce the network")


def _forecaster(model: torch.nn.Module, checkpoint_dir: str) -> Any:
    from tabicl.forecast import TabICLForecaster

    path = Path(checkpoint_dir) / "model.ckpt"
    if not path.exists():
        torch.save({"config": model.checkpoint_config, "state_dict": model.state_dict()}, path)
    # REGRESSOR spelled out (the package's defaults), so that the reference runs what the manifest records.
    config = {"model_path": str(path), "allow_auto_download": False, "device": "cpu", **REGRESSOR}
    return TabICLForecaster(max_context_length=model.forecast_context, tabicl_config=config)


def forecast_frames(model: torch.nn.Module, series: list[dict[str, Any]], horizon: int, quantiles: list[float]) -> list[dict[str, np.ndarray]]:
    """TabICLForecaster.predict_df on series {start, freq, target, future (covariates over history
    and horizon)}: the mean and the quantiles [levels, steps] per series, with the timestamps of
    history and horizon (epoch milliseconds)."""
    context, future = [], []
    for i, s in enumerate(series):
        n = len(s["target"])
        stamps = pd.date_range(s["start"], periods=n + horizon, freq=s["freq"])
        covariates = s.get("future", {})
        context.append(pd.DataFrame({"item_id": i, "timestamp": stamps[:n], "target": s["target"], **{k: v[:n] for k, v in covariates.items()}}))
        future.append(pd.DataFrame({"item_id": i, "timestamp": stamps[n:], **{k: v[n:] for k, v in covariates.items()}}))
    with tempfile.TemporaryDirectory() as tmp:
        forecaster = _forecaster(model, tmp)
        if any("future" in s for s in series):
            frame = forecaster.predict_df(pd.concat(context), future_df=pd.concat(future), quantiles=quantiles)
        else:
            frame = forecaster.predict_df(pd.concat(context), prediction_length=horizon, quantiles=quantiles)
    out = []
    for i, s in enumerate(series):
        rows = frame.loc[i]
        stamps = pd.date_range(s["start"], periods=len(s["target"]) + horizon, freq=s["freq"])
        out.append({
            "mean": rows["target"].to_numpy(np.float64),
            "quantiles": np.stack([rows[q].to_numpy(np.float64) for q in quantiles]),
            "times": stamps.as_unit("ms").asi8.astype(np.float64),
        })
    return out


def reference_forecast(model: torch.nn.Module, histories: list[np.ndarray], horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """The reference pipeline on a batch of series without timestamps: hourly steps from
    2024-01-01 (the pipeline needs a time index); the mean [n, h] and the quantiles [n, 9, h]."""
    series = [{"start": "2024-01-01", "freq": "h", "target": np.asarray(h, dtype=np.float64)} for h in histories]
    out = forecast_frames(model, series, horizon, QUANTILES)
    return np.stack([o["mean"] for o in out]), np.stack([o["quantiles"] for o in out])


def reference_check(model: torch.nn.Module, case: dict[str, Any]) -> dict[str, Any]:
    """Recomputes a recorded case of reference.json (test/bench/peers/onnx-reference.py): the
    mean and the quantiles per series, for the peer's comparison with the case's "expected"."""
    series = [
        {
            "start": s["start"],
            "freq": s["freq"],
            "target": np.array([np.nan if v is None else v for v in s["target"]], dtype=np.float64),
            **({"future": {k: np.array(v, dtype=np.float64) for k, v in s["future"].items()}} if "future" in s else {}),
        }
        for s in case["series"]
    ]
    got = forecast_frames(model, series, case["horizon"], case["levels"])
    return {"mean": [g["mean"] for g in got], "quantiles": [g["quantiles"] for g in got]}


def reference_cases() -> list[dict[str, Any]]:
    """Fixed inputs: hourly and daily series with seasons, missing values, short histories, a long
    horizon, a history past the context, known-future covariates, tail levels and a batch."""
    rng = np.random.RandomState(7)
    seasonal = seasonal_maker(rng)
    cases = feature_table_cases(seasonal, TINY_CONTEXT)
    covariate_series = []
    for n in (40, 30):
        t = np.arange(n + 10)
        price = 10 + 3 * np.sin(2 * np.pi * t / 24) + rng.normal(0, 0.3, n + 10)
        promo = ((t % 5) == 0).astype(np.float64)
        target = 50 + 2.5 * price[:n] + 8 * promo[:n] + rng.normal(0, 1, n)
        covariate_series.append({**hourly_series(target), "future": {"price": price, "promo": promo}})
    cases.append({"name": "covariates", "horizon": 10, "series": covariate_series})
    cases.append({"name": "tail_levels", "horizon": 5, "levels": [0.0005, 0.01, 0.25, 0.5, 0.75, 0.999, 0.9999], "series": [hourly_series(seasonal(40, 24))]})
    cases.append({"name": "batch_of_40", "horizon": 6, "series": [hourly_series(seasonal(int(rng.randint(20, 60)), float(rng.choice([6, 12, 24])))) for _ in range(40)]})
    return cases


def record_reference(model: torch.nn.Module, out_dir: Path, seed: int) -> Path:
    """Forecasts of TabICLForecaster.predict_df for the fixed cases, written beside the ONNX file."""
    cases = []
    for case in reference_cases():
        levels = case.get("levels", QUANTILES)
        got = forecast_frames(model, case["series"], case["horizon"], levels)
        cases.append({
            "name": case["name"],
            "horizon": case["horizon"],
            "levels": levels,
            "series": [
                {
                    "target": to_json_array(s["target"]),
                    "start": s["start"],
                    "freq": s["freq"],
                    "times": [int(v) for v in g["times"]],
                    **({"future": {k: to_json_array(v) for k, v in s["future"].items()}} if "future" in s else {}),
                }
                for s, g in zip(case["series"], got)
            ],
            # mean [series][step]; quantiles [series][level][step] at the case's levels
            "expected": {"mean": [to_json_array(g["mean"]) for g in got], "quantiles": [to_json_array(g["quantiles"]) for g in got]},
        })
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": f"tabicl.forecast.TabICLForecaster(max_context_length={model.forecast_context}, tabicl_config=<regressor>).predict_df (tabicl 2.2.0)",
        "seed": seed,
        "context_length": model.forecast_context,
        "regressor": REGRESSOR,
        "versions": package_versions("torch", "tabicl", "numpy", "pandas", "scikit-learn", "scipy", "statsmodels"),
        "cases": cases,
    })
