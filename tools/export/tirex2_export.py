"""TiRex-2 (NX-AI, PyPI package `tirex-2` 0.4.0, `tirex2.TiRex2`) to ONNX.

The reference runs on the CPU (`load_model(..., device="cpu")`): its sLSTM cells use FlashRNN's
`vanilla` backend and its mLSTM cells mlstm_kernels' native chunkwise kernel, both plain torch in
float32 there (the bfloat16 kernels are CUDA's), so the exported graph is float32 throughout.

What the ONNX graph holds (tirex2_graph.py): `TiRex2.forward` on prepared rows of exactly
`context_len + future_len` values, and the slicing of `TiRex2._predict`: the last `future_len`
steps of every row at the model's quantile levels, in the data's scale.

What the adapter (models/families/foundation/tirex2.ts) does, as `ForecastModel.forecast` ->
`TiRex2.predict` (`tta_sign_flip`, `tta_diff` from the checkpoint's config, recorded in the
manifest) -> `PostProcessor.transform_input` / `transform_output` (its default
`PostProcessorConfig`, also recorded): one group of rows per series (the target, past-only
covariates NaN over the horizon, known-future covariates), trend detection (`_detect_trends`:
an OLS fit of the z-scored target) and differencing of trending targets, the window padding and
cutting (`_fix_context_size`), then the band calibration of raw rows, the integration of
differenced ones, and with `tta_sign_flip` a second pass on the negated inputs, averaged with the
first through the complementary levels. The reference has no roll-out: a horizon above
`future_len` is cut to `future_len` (a logged warning), so the service refuses it.

Graph contract:
  x           [rows, context_len + future_len] float32  prepared rows (NaN = not observed)
  group       [rows] float32                            the series each row belongs to
  target_mask [rows] bool                               whether the row is the series' target
  -> quantiles [rows, Q, future_len] float32
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ONNX_FILE, clean_onnx, ensure_dir, package_versions, remove_raw_export, series_bank, to_json_array, torch_optimiser_fits, write_manifest, write_reference
from tirex2_graph import Tirex2Graph, exportable_recurrence

MODEL_NAME = "tirex-2"
QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]  # TiRex-2's docstring example: 9 levels


def stack_template(kind: str, embedding_dim: int, num_heads: int) -> dict[str, Any]:
    """A block template of `MultivariateStackConfig.from_dict`: a bidirectional time mixer
    (`bi-slstm` or `bi-mlstm`) then the attention variate mixer."""
    return {
        "time_mixer": {"model_type": kind, "embedding_dim": embedding_dim, "num_heads": num_heads},
        "variate_mixer": {"embedding_dim": embedding_dim, "num_heads": num_heads},
        "dropout": 0.0,
        "eps": 1e-6,
    }


def build(patch_size: int, context: int, future: int, embedding_dim: int, num_heads: int, recipe: list[str], input_ff_dim: int) -> Any:
    """A TiRex2 of the reference's code on the CPU, with the given sizes; the scaler with arcsinh
    and binary awareness, an RMS output norm, GELU."""
    from tirex2 import TiRex2

    kinds = {"slstm": "bi-slstm", "mlstm": "bi-mlstm"}
    config = dict(
        stack_config={"templates": {k: stack_template(v, embedding_dim, num_heads) for k, v in kinds.items()}, "recipe": recipe},
        num_blocks=len(recipe),
        embedding_dim=embedding_dim,
        input_patch_size=patch_size,
        output_patch_size=patch_size,
        quantiles=QUANTILES,
        tokenizer_cfg={"output_patch_size": patch_size, "input_patch_size": patch_size, "input_patch_stride": patch_size},
        scaler_cfg={"eps": 1e-8, "use_arcsinh": True, "binaryaware": True},
        h_expand=2.0,
        context_len=context,
        future_len=future,
        input_ff_dim=input_ff_dim,
        act_func="GELU",
        dropout=0.0,
        stack_out_norm_config={"eps": 1e-6, "use_rmsnorm": True},
        tta_sign_flip=False,
        tta_diff=True,
        device="cpu",
    )
    return TiRex2(**config).eval()


def randomize_tirex2_(model: Any, seed: int) -> None:
    """Fixed random weights of a plausible scale. The reference's initialisation zeroes the sLSTM
    recurrent kernel and the mLSTM gate weights, which would leave the recurrences untested:
    matrices ~ N(0, 1/fan_in), norm weights ~ N(1, 0.1), the recurrent gate biases their
    reference initialisation (a forget gate near open) plus N(0, 0.1), other vectors N(0, 0.1).
    The quantile head's output and residual layers are then scaled by 1/4, so that its outputs
    stay within a few units of the scaled (arcsinh) space, as a trained head's do: larger ones
    pass through sinh and make the random network's float32 rounding (not the adapter) visible at
    the parity tolerance (3e-5 between float32 and float64 torch at scale 1, 7e-7 at 1/4)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            if p.dim() >= 2:
                p.copy_(noise / np.sqrt(p.shape[-1]))
            elif "norm" in name:
                p.copy_(1.0 + 0.1 * noise)
            elif name.endswith("_bias_") or "gate_preact.bias" in name:
                p.add_(0.1 * noise)
            else:
                p.copy_(0.1 * noise)
        for name, p in model.output_patch_embedding.named_parameters():
            if not name.startswith("hidden_layer"):
                p.mul_(0.25)


def tiny_model(seed: int) -> Any:
    """Context 64 and horizon 48 in patches of 8 (M4 Hourly's horizon, for the benchmark),
    embedding 32 in 4 heads, one sLSTM block and one mLSTM block (each with the attention variate
    mixer): every kind of block of the stack."""
    torch.manual_seed(seed)
    model = build(patch_size=8, context=64, future=48, embedding_dim=32, num_heads=4, recipe=["slstm", "mlstm"], input_ff_dim=64)
    randomize_tirex2_(model, seed)
    return model


def base_size_model(seed: int) -> Any:
    """A TiRex-2-like size for speed measurements only (context 2048, horizon 320 = the 10 future
    patches of 32 `TiRex2._predict` names, embedding 512 in 4 heads, 12 blocks alternating sLSTM
    and mLSTM); random weights."""
    torch.manual_seed(seed)
    model = build(patch_size=32, context=2048, future=320, embedding_dim=512, num_heads=4, recipe=["slstm", "mlstm"] * 6, input_ff_dim=2048)
    randomize_tirex2_(model, seed)
    return model


def load_checkpoint(path: str) -> Any:
    """A local checkpoint folder (config.json and model.safetensors, as NX-AI/TiRex-2 ships), on the CPU."""
    from tirex2 import load_model

    # Dense attention: FlexAttention (a checkpoint option for large CUDA batches) computes the
    # same masked attention but is not exportable.
    return load_model(path, device="cpu", use_flex_attention=False).model


def postprocessor_config() -> dict[str, float]:
    from tirex2.model.component.postprocessor import PostProcessorConfig

    return dataclasses.asdict(PostProcessorConfig())


def export(model: Any, out_dir: Path, version: str, source: str) -> Path:
    from torch.export import Dim

    if model.input_patch_size != model.output_patch_size or model.context_len % model.input_patch_size != 0:
        raise SystemExit("the export needs equal input and output patches and a context of whole patches")
    levels = [round(float(q), 6) for q in model.quantiles]
    if 0.5 not in levels:
        raise SystemExit("the reference's band calibration and point forecast use the 0.5 level, which this head lacks")
    folder = ensure_dir(out_dir / MODEL_NAME)
    graph = Tirex2Graph(model).eval()
    width = model.context_len + model.future_len
    x = torch.randn(5, width) * 10 + 50
    x[:, -model.future_len :] = float("nan")
    x[3, -model.future_len :] = torch.randn(model.future_len)  # a known-future covariate
    x[0, :20] = float("nan")
    group = torch.tensor([1.0, 1.0, 2.0, 2.0, 3.0])
    target_mask = torch.tensor([True, False, True, False, True])
    rows = Dim("rows", min=1, max=1 << 16)
    started = time.time()
    with torch.no_grad(), exportable_recurrence():
        onnx_program = torch.onnx.export(
            graph,
            (x, group, target_mask),
            input_names=["x", "group", "target_mask"],
            output_names=["quantiles"],
            opset_version=18,
            dynamo=True,
            dynamic_shapes={"x": {0: rows}, "group": {0: rows}, "target_mask": {0: rows}},
            optimize=torch_optimiser_fits(model),
        )
    raw = folder / "model.raw.onnx"
    onnx_program.save(str(raw))
    clean_onnx(raw, folder / ONNX_FILE)
    remove_raw_export(raw)
    strip_subgraph_traces(folder / ONNX_FILE)
    print(f"exported {MODEL_NAME} in {time.time() - started:.0f} s")
    check_onnx(folder / ONNX_FILE, graph, (x, group, target_mask))
    return write_manifest(
        folder,
        {
            "model": MODEL_NAME,
            "version": version,
            "source": source,
            "context_length": model.context_len,
            "future_length": model.future_len,
            "patch_size": model.input_patch_size,
            "quantile_levels": levels,
            "point_output": "median",
            "covariates": ["historical", "future"],
            "forecast_config": {"tta_sign_flip": bool(model.tta_sign_flip), "tta_diff": bool(model.tta_diff), **postprocessor_config()},
            "exported_with": package_versions("tirex-2", "torch", "onnx", "onnxruntime"),
        },
    )


def strip_subgraph_traces(path: Path) -> None:
    """`clean_onnx` drops the exporter's stack traces from the top-level nodes; the If branches
    (tirex2_graph.py) carry their own, several times the weights' size: dropped here too."""
    import onnx

    model = onnx.load(str(path))

    def strip(graph: Any) -> None:
        for node in graph.node:
            for attribute in node.attribute:
                if attribute.type == onnx.AttributeProto.GRAPH:
                    for inner in attribute.g.node:
                        inner.doc_string = ""
                        del inner.metadata_props[:]
                    for info in attribute.g.value_info:
                        info.doc_string = ""
                    strip(attribute.g)

    strip(model.graph)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def check_onnx(path: Path, graph: Any, inputs: tuple[torch.Tensor, ...]) -> None:
    """The ONNX graph against `TiRex2.forward` itself (not the wrapper), on the export inputs, on
    a batch of another row count and on a batch of univariate series (the graph's If branches
    that skip the reverse pass and the variate mixing)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    m = graph.model
    x, group, target_mask = inputs
    univariate = (x[[0, 2, 4]].clone(), torch.tensor([1.0, 2.0, 3.0]), torch.ones(3, dtype=torch.bool))  # both If branches skipped
    for x, group, target_mask in (inputs, (x[1:4].clone(), group[1:4].clone(), target_mask[1:4].clone()), univariate):
        with torch.no_grad():
            full = m({"x": x, "group_vector": group, "target_mask": target_mask})[..., : -m.output_patch_size][..., -m.future_len :]
        got = session.run(None, {"x": x.numpy(), "group": group.numpy(), "target_mask": target_mask.numpy()})[0]
        error = float(np.max(np.abs(got - full.numpy()) / np.maximum(np.abs(full.numpy()), 1.0)))
        print(f"onnx vs TiRex2.forward on {x.shape[0]} rows: max relative error {error:.2e}")
        if not error < 1e-5:
            raise SystemExit(f"the ONNX graph differs from the reference forward ({error:.2e})")


# --- the reference pipeline's forecasts -------------------------------------------------------


def as_timeseries(series: dict[str, Any]) -> Any:
    """A series of the fixture ({"target", "past": {name: values}, "future": {name: values}}) as
    the reference's `TimeseriesType`: covariates in name order, one row each."""
    from tirex2 import TimeseriesType

    def rows(named: dict[str, np.ndarray] | None) -> torch.Tensor | None:
        if not named:
            return None
        return torch.from_numpy(np.stack([np.asarray(named[k], dtype=np.float32) for k in sorted(named)]))

    target = torch.from_numpy(np.asarray(series["target"], dtype=np.float32))[None, :]
    return TimeseriesType(target=target, past_covariates=rows(series.get("past")), future_covariates=rows(series.get("future")))


def reference_forecast(model: Any, histories: list[np.ndarray], horizon: int, batch_size: int = 512) -> dict[str, np.ndarray]:
    """The reference's own forecast of a batch of series, on the CPU: `ForecastModel.forecast`
    with `prediction_length=horizon` and the checkpoint's TTA settings, as a user calls it.
    Returns {"quantiles": [n, levels, horizon]}; the point forecast is the 0.5 level."""
    return {"quantiles": forecast_cases(model, [{"target": h} for h in histories], horizon, batch_size=batch_size)}


def forecast_cases(model: Any, series: list[dict[str, Any]], horizon: int, batch_size: int = 512, **options: Any) -> np.ndarray:
    from tirex2.api_adapter import ForecastModel

    with torch.no_grad():
        out = ForecastModel(model).forecast([as_timeseries(s) for s in series], prediction_length=horizon, output_type="numpy", batch_size=batch_size, **options)
    return np.stack([o[0] for o in out]).astype(np.float64)


def trending(model: Any, target: np.ndarray) -> bool:
    """`PostProcessor._detect_trends` of one target: whether the reference differences it."""
    return bool(model.postprocessor._detect_trends(torch.from_numpy(np.asarray(target, dtype=np.float32))[None, :])[0])


def covariate_series(rng: np.random.RandomState, lengths: tuple[int, ...], horizon: int, past: bool, future: bool) -> list[dict[str, Any]]:
    """Targets driven by a known-future price and promotion flag and a past-only temperature."""
    out = []
    for n in lengths:
        t = np.arange(n + horizon)
        price = (10 + 3 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 0.3, n + horizon)).astype(np.float32)
        promo = ((t % 7) == 0).astype(np.float32)
        temperature = (20 + 5 * np.sin(2 * np.pi * t[:n] / 24) + rng.normal(0, 1, n)).astype(np.float32)
        target = (50 + 2.5 * price[:n] + 8 * promo[:n] + 0.3 * temperature + rng.normal(0, 1, n)).astype(np.float32)
        entry: dict[str, Any] = {"target": target}
        if future:
            entry["future"] = {"price": price, "promo": promo}
        if past:
            entry["past"] = {"temperature": temperature}
        out.append(entry)
    return out


def reference_cases(model: Any) -> list[dict[str, Any]]:
    F = model.future_len
    rng = np.random.RandomState(17)
    basic = [{"target": s} for s in (series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0])]
    missing = [s.copy() for s in series_bank(4, 4, 30, 90)]
    missing[0][10:15] = np.nan
    missing[1][:5] = np.nan
    missing[2][-3:] = np.nan
    missing[3][::4] = np.nan
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 2, 2)[0], series_bank(7, 1, 5, 5)[0], series_bank(8, 1, 11, 11)[0]]
    flat = np.full(20, 42.0, dtype=np.float32)  # zero spread: the scaler's eps floor
    binary = (rng.uniform(size=40) < 0.3).astype(np.float32)  # 0/1 only: the binary-aware scaler
    t = np.arange(120, dtype=np.float32)
    trends = [10 + 0.8 * t + rng.normal(0, 1, 120).astype(np.float32), 500 - 2.0 * t[:70] + rng.normal(0, 3, 70).astype(np.float32)]
    trends.append(trends[0].copy())
    trends[2][[20, 55, 119]] = np.nan  # a differenced target with missing values, the last one too
    return [
        {"name": "basic", "horizon": 16, "series": basic},
        {"name": "missing_values", "horizon": 20, "series": [{"target": s} for s in missing]},
        {"name": "short_histories", "horizon": 10, "series": [{"target": s} for s in (*short, flat, binary)]},
        {"name": "long_history", "horizon": F, "series": [{"target": s} for s in series_bank(9, 2, 250, 400)]},
        {"name": "trending", "horizon": F, "series": [{"target": s} for s in (*trends, series_bank(10, 1, 80, 80)[0])]},
        {"name": "covariates", "horizon": 24, "series": covariate_series(rng, (50, 64, 100), 24, past=True, future=True)},
        {"name": "future_covariates", "horizon": 12, "series": covariate_series(rng, (30, 90), 12, past=False, future=True)},
        {"name": "past_covariates", "horizon": 12, "series": covariate_series(rng, (40, 200), 12, past=True, future=False)},
        {"name": "sign_flip", "horizon": 16, "options": {"tta_sign_flip": True}, "series": [*basic, {"target": trends[1]}, *covariate_series(rng, (60,), 16, past=True, future=True)]},
        {"name": "batch_of_40", "horizon": F, "series": [{"target": s} for s in series_bank(seed=11, count=40, min_len=5, max_len=200)]},
    ]


def json_series(series: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"target": to_json_array(series["target"])}
    for kind in ("past", "future"):
        if series.get(kind):
            out[kind] = {k: to_json_array(v) for k, v in sorted(series[kind].items())}
    return out


def reference_check(model: Any, case: dict[str, Any]) -> dict[str, Any]:
    """A recorded case recomputed with the reference pipeline (test/bench/peers/onnx-reference.py)."""

    def values(v: list[Any]) -> np.ndarray:
        return np.asarray([np.nan if x is None else x for x in v], dtype=np.float32)

    series = [{"target": values(s["target"]), **{k: {n: values(v) for n, v in s[k].items()} for k in ("past", "future") if k in s}} for s in case["series"]]
    return {"quantiles": list(forecast_cases(model, series, case["horizon"], **case.get("options", {})))}


def record_reference(model: Any, out_dir: Path, seed: int) -> Path:
    """The reference pipeline's forecasts of fixed cases, with the model's input settings."""
    cases = []
    for case in reference_cases(model):
        quantiles = forecast_cases(model, case["series"], case["horizon"], **case.get("options", {}))
        record = {"name": case["name"], "horizon": case["horizon"], "series": [json_series(s) for s in case["series"]]}
        if "options" in case:
            record["options"] = case["options"]
        record["differenced"] = [trending(model, s["target"]) for s in case["series"]]
        record["expected"] = {"quantiles": [to_json_array(q) for q in quantiles]}
        cases.append(record)
    meta = {
        "reference": "tirex2 ForecastModel.forecast (tirex-2 0.4.0, CPU)",
        "seed": seed,
        "quantile_levels": QUANTILES,
        "versions": package_versions("tirex-2", "torch", "numpy"),
    }
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {**meta, "cases": cases})
