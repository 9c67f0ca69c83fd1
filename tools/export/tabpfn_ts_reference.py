"""The reference records of TabPFN-TS (tools/export/tabpfn_ts.py): the fixed cases, the forecasts of
`TabPFNTSPipeline.predict_df` for them, the pipeline's intermediate values for the adapter's
step-by-step tests, and the benchmark's `reference_forecast` / `reference_check`
(test/bench/onnx-reference.ts names this module as tabpfn-ts's reference module).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ensure_dir, feature_table_cases, hourly_series, package_versions, seasonal_maker, to_json_array, write_reference  # noqa: E402
from tabpfn_ts import MODEL_NAME, QUANTILES, REGRESSOR, TINY_CONTEXT, TabPFNModel, _pipeline, checkpoint_path, forecast_frames  # noqa: E402


def stages(model: TabPFNModel, s: dict[str, Any], horizon: int) -> dict[str, Any]:
    """The pipeline's intermediate values for one series, for the adapter's step-by-step tests: the
    feature table the regressor receives, and per ensemble member the prepared tables, the
    transformed training targets, the logits and the borders its distribution is read on."""
    from tabpfn import TabPFNRegressor
    from tabpfn.inference import InferenceEngineCachePreprocessing
    from tabpfn_time_series import TimeSeriesDataFrame
    from tabpfn_time_series.data_preparation import split_time_series_to_X_y
    from tabpfn_time_series.pipeline import _preprocess_context, _preprocess_covariates, _preprocess_future

    n = len(s["target"])
    stamps = pd.date_range(s["start"], periods=n + horizon, freq=s["freq"])
    covariates = s.get("future", {})
    context = TimeSeriesDataFrame.from_data_frame(pd.DataFrame({"item_id": 0, "timestamp": stamps[:n], "target": s["target"], **{k: v[:n] for k, v in covariates.items()}}))
    future = TimeSeriesDataFrame.from_data_frame(pd.DataFrame({"item_id": 0, "timestamp": stamps[n:], **{k: v[n:] for k, v in covariates.items()}}))
    pipeline = _pipeline(model)
    context = _preprocess_context(context, pipeline.max_context_length)
    future = _preprocess_future(future)
    context, future = _preprocess_covariates(context, future)
    train, test = pipeline.feature_transformer.transform(context, future)
    train_X, train_y = split_time_series_to_X_y(train.loc[0].copy())
    test_X, _ = split_time_series_to_X_y(test.loc[0].copy())
    members: list[dict[str, Any]] = []
    original = InferenceEngineCachePreprocessing._call_model

    def capture(self: Any, **kwargs: Any) -> Any:
        out = original(self, **kwargs)
        members.append({"X_train": np.asarray(kwargs["X_train"], dtype=np.float64), "X_test": np.asarray(kwargs["X_test"], dtype=np.float64), "y_train": np.asarray(kwargs["y_train"], dtype=np.float64), "logits": out.detach().float().numpy().squeeze(1)})
        return out

    InferenceEngineCachePreprocessing._call_model = capture
    try:
        reg = TabPFNRegressor(model_path=str(checkpoint_path(model)), device="cpu")
        reg.fit(train_X.values, train_y.squeeze().values)
        _, _, borders = reg.forward(_predict_input(reg, test_X.values), use_inference_mode=True)
    finally:
        InferenceEngineCachePreprocessing._call_model = original
    members = members[-len(borders):]
    return {
        "columns": [str(c) for c in train_X.columns],
        "train_X": [[v if isinstance(v, str) else (None if pd.isna(v) else float(v)) for v in row] for row in train_X.values.tolist()],
        "test_X": [[v if isinstance(v, str) else (None if pd.isna(v) else float(v)) for v in row] for row in test_X.values.tolist()],
        "train_y": to_json_array(train_y.squeeze().values),
        "y_mean": float(reg.y_train_mean_),
        "y_std": float(reg.y_train_std_),
        "members": [
            {"X_train": to_json_array(m["X_train"]), "X_test": to_json_array(m["X_test"]), "y_train": to_json_array(m["y_train"]), "logits": to_json_array(m["logits"]), "borders": to_json_array(np.asarray(b, dtype=np.float64))}
            for m, b in zip(members, borders)
        ],
    }


def fingerprints(model: TabPFNModel, s: dict[str, Any], horizon: int) -> list[np.ndarray]:
    """Each member's fingerprint column (training rows then test rows) for one series, as the
    package computes it in this process. The column hashes the member's feature values rounded to
    12 decimals, so it changes wherever a value's last bits do: with numpy's math library on
    another CPU (its AVX-512 kernels round some log1p, expm1, log and sin results differently), and
    between numpy and JavaScript. The adapter's tests feed these columns in to compare everything
    else at 1e-4 (see test/models/foundation/tabpfn-ts.test.ts)."""
    from tabpfn.preprocessing.steps.add_fingerprint_features_step import AddFingerprintFeaturesStep

    original = AddFingerprintFeaturesStep._transform
    seen: list[tuple[bool, np.ndarray]] = []

    def recording(self: Any, X: Any, *, is_test: bool = False) -> Any:
        out = original(self, X, is_test=is_test)
        seen.append((is_test, np.asarray(out[1], dtype=np.float64).ravel()))
        return out

    AddFingerprintFeaturesStep._transform = recording
    try:
        target = s["target"]
        # the pipeline's missing-value handling: at most one observed value -> the rest 0, else dropped
        kept = np.nan_to_num(target, nan=0.0) if (~np.isnan(target)).sum() <= 1 else target[~np.isnan(target)]
        if len(np.unique(kept)) <= 1:
            return []  # a constant target: the regressor answers it without its members
        stages(model, s, horizon)
    finally:
        AddFingerprintFeaturesStep._transform = original
    train = [x for test, x in seen if not test]
    test = [x for test, x in seen if test]
    n = REGRESSOR["n_estimators"]
    return [np.concatenate([a, b]) for a, b in zip(train[-n:], test[-n:])]


def _predict_input(reg: Any, X: np.ndarray) -> Any:
    """What TabPFNRegressor.predict hands its executor (dtypes fixed, text categories encoded)."""
    from tabpfn.preprocessing.clean import fix_dtypes, process_text_na_dataframe
    from tabpfn.preprocessing.datamodel import FeatureModality
    from tabpfn.validation import ensure_compatible_predict_input_sklearn

    X = ensure_compatible_predict_input_sklearn(X, reg)
    X = fix_dtypes(X, cat_indices=reg.inferred_feature_schema_.indices_for(FeatureModality.CATEGORICAL))
    return process_text_na_dataframe(X, ord_encoder=getattr(reg, "ordinal_encoder_", None))


def reference_forecast(model: TabPFNModel, histories: list[np.ndarray], horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """The reference pipeline on a batch of series without timestamps: hourly steps from
    2024-01-01 (the pipeline needs a time index); the median [n, h] and the quantiles [n, 9, h]."""
    series = [{"start": "2024-01-01", "freq": "h", "target": np.asarray(h, dtype=np.float64)} for h in histories]
    out = forecast_frames(model, series, horizon, QUANTILES)
    return np.stack([o["median"] for o in out]), np.stack([o["quantiles"] for o in out])


def _series_of(s: dict[str, Any]) -> dict[str, Any]:
    future = {k: (np.array(v, dtype=object) if any(isinstance(x, str) for x in v) else np.array(v, dtype=np.float64)) for k, v in s.get("future", {}).items()}
    target = np.array([np.nan if v is None else v for v in s["target"]], dtype=np.float64)
    return {"start": s["start"], "freq": s["freq"], "target": target, **({"future": future} if future else {})}


def reference_check(model: TabPFNModel, case: dict[str, Any]) -> dict[str, Any]:
    """Recomputes a recorded case of reference.json (test/bench/peers/onnx-reference.py)."""
    got = forecast_frames(model, [_series_of(s) for s in case["series"]], case["horizon"], case["levels"])
    return {"median": [g["median"] for g in got], "quantiles": [g["quantiles"] for g in got]}


def reference_cases() -> list[dict[str, Any]]:
    """Fixed inputs: hourly and daily series with seasons, missing values, short histories, a long
    horizon, a history past the context, numeric and string known-future covariates, tail levels
    and a batch."""
    rng = np.random.RandomState(7)
    seasonal = seasonal_maker(rng)
    cases = feature_table_cases(seasonal, TINY_CONTEXT)
    numeric, strings = [], []
    # 120 rows: past the regressor's 100, where a numeric column of under 4 values is categorical.
    for n in (40, 120):
        t = np.arange(n + 10)
        price = 10 + 3 * np.sin(2 * np.pi * t / 24) + rng.normal(0, 0.3, n + 10)
        promo = ((t % 5) == 0).astype(np.float64)
        target = 50 + 2.5 * price[:n] + 8 * promo[:n] + rng.normal(0, 1, n)
        numeric.append({**hourly_series(target), "future": {"price": price, "promo": promo}})
        shift = np.array(["night", "day", "day", "evening"], dtype=object)[(t // 6) % 4]
        level = np.where(shift == "day", 20.0, np.where(shift == "evening", 10.0, 0.0))
        strings.append({**hourly_series(60 + level[:n] + rng.normal(0, 1, n)), "future": {"shift": shift, "price": price}})
    cases.append({"name": "covariates", "horizon": 10, "series": numeric})
    cases.append({"name": "string_covariates", "horizon": 10, "series": strings})
    cases.append({"name": "tail_levels", "horizon": 5, "levels": [0.001, 0.01, 0.25, 0.5, 0.75, 0.99, 0.999], "series": [hourly_series(seasonal(40, 24))]})
    cases.append({"name": "batch_of_20", "horizon": 6, "series": [hourly_series(seasonal(int(rng.randint(20, 60)), float(rng.choice([6, 12, 24])))) for _ in range(20)]})
    return cases


def _json_values(v: np.ndarray) -> list[Any]:
    return [str(x) for x in v] if v.dtype == object else to_json_array(v)


def _as_written(s: dict[str, Any]) -> dict[str, Any]:
    """A series with its numbers as reference.json writes them (9 significant digits), so that the
    reference forecasts exactly the inputs the adapter's tests read back (the fingerprint column
    hashes feature values to 12 decimals: a rounding difference would change it)."""
    exact = lambda v: np.array([np.nan if x is None else x for x in to_json_array(v)], dtype=np.float64)
    future = {k: (v if v.dtype == object else exact(v)) for k, v in s.get("future", {}).items()}
    return {**s, "target": exact(s["target"]), **({"future": future} if future else {})}


def record_reference(model: TabPFNModel, out_dir: Path, seed: int) -> Path:
    """Forecasts of TabPFNTSPipeline.predict_df for the fixed cases, and the intermediate values of
    two series (numeric and string covariates), written beside the ONNX file."""
    cases = []
    stage_records = {}
    for case in reference_cases():
        case = {**case, "series": [_as_written(s) for s in case["series"]]}
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
                    **({"future": {k: _json_values(v) for k, v in s["future"].items()}} if "future" in s else {}),
                    # [member][row]: the reference's fingerprint columns (see `fingerprints`)
                    "fingerprints": [[float(v) for v in f] for f in fingerprints(model, s, case["horizon"])],
                }
                for s, g in zip(case["series"], got)
            ],
            # median [series][step] (the pipeline's point forecast); quantiles [series][level][step]
            "expected": {"median": [to_json_array(g["median"]) for g in got], "quantiles": [to_json_array(g["quantiles"]) for g in got]},
        })
        if case["name"] in ("basic", "covariates", "string_covariates"):
            stage_records[case["name"]] = stages(model, case["series"][0], case["horizon"])
    folder = ensure_dir(out_dir / MODEL_NAME)
    write_reference(folder, {
        "model": MODEL_NAME,
        "reference": f"tabpfn_time_series.TabPFNTSPipeline(max_context_length={model.forecast_context}, tabpfn_mode=LOCAL, tabpfn_model_config={{model_path: <v2 checkpoint>}}).predict_df (tabpfn-time-series 1.0.10, tabpfn 6.4.1)",
        "seed": seed,
        "context_length": model.forecast_context,
        "regressor": REGRESSOR,
        "versions": package_versions("torch", "tabpfn", "tabpfn-time-series", "numpy", "pandas", "scikit-learn", "scipy", "gluonts"),
        "cases": cases,
    })
    path = folder / "stages.json"
    path.write_text(json.dumps(stage_records, separators=(",", ":")) + "\n")
    return path
