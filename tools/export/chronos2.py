"""Chronos-2 (amazon-science/chronos-forecasting, package `chronos-forecasting`) to ONNX.

What the ONNX graph holds: `Chronos2Model.forward` of the reference, i.e. instance
normalisation (with arcsinh), patching with masks and time encoding, the [REG] token, the
encoder's time and group attention, the quantile head and the inverse scaling. What the service's
adapter (models/families/foundation/chronos2.ts) does, as `Chronos2Pipeline` does: context slicing and
left padding, grouping a target with its covariates, batching, the long-horizon roll-out
(unrolled quantiles, weighted quantiles) and picking the requested quantiles.

Graph contract (all float32 but group_ids):
  context            [rows, T]   T a multiple of patch_size, <= context_length; NaN = missing
  group_ids          [rows]      int64; rows with the same id attend to each other
  future_covariates  [rows, F]   F a multiple of output_patch_size (num_output_patches = F / it);
                                 NaN where unknown (always NaN on target rows)
  -> quantile_preds  [rows, Q, F] in the series' scale, Q = len(quantile_levels)
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ensure_dir, package_versions, randomize_, series_bank, to_json_array, write_manifest, save_onnx, write_reference

MODEL_NAME = "chronos-2"
# The released checkpoint's quantile levels (amazon/chronos-2 config.json).
QUANTILES = [0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99]
UNROLLED_QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
BATCH_SIZE = 256  # Chronos2Pipeline.predict's default batch_size (rows, targets and covariates)


def rows_per_call(cfg: Any) -> int:
    """Rows per network call in the adapter: the group attention's cost grows with the square of
    the rows in a call, the rest linearly; past about the number of context patches (at least
    32) the square dominates. Calls hold whole groups, so this changes speed, not forecasts."""
    return max(32, min(BATCH_SIZE, cfg.context_length // cfg.input_patch_size))


class OnnxForward(torch.nn.Module):
    """`Chronos2Model.forward` with num_output_patches read from the future covariates' width."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, context: torch.Tensor, group_ids: torch.Tensor, future_covariates: torch.Tensor) -> torch.Tensor:
        patches = future_covariates.shape[-1] // self.model.chronos_config.output_patch_size
        return self.model(context=context, group_ids=group_ids, future_covariates=future_covariates, num_output_patches=patches).quantile_preds


def sized_model(d_model: int, d_kv: int, d_ff: int, num_layers: int, num_heads: int, context_length: int, patch: int, max_output_patches: int) -> Any:
    """A Chronos-2 of the given sizes, built by the reference's own classes, with its initial weights."""
    from chronos.chronos2 import Chronos2Model
    from chronos.chronos2.config import Chronos2CoreConfig

    config = Chronos2CoreConfig(
        d_model=d_model, d_kv=d_kv, d_ff=d_ff, num_layers=num_layers, num_heads=num_heads, dropout_rate=0.0, feed_forward_proj="relu",
        attn_implementation="sdpa", architectures=["Chronos2Model"],
        chronos_config=dict(
            context_length=context_length, input_patch_size=patch, output_patch_size=patch, input_patch_stride=patch, quantiles=QUANTILES,
            use_reg_token=True, use_arcsinh=True, max_output_patches=max_output_patches,
        ),
    )
    return Chronos2Model(config).eval()


def tiny_model(seed: int) -> Any:
    """A tiny Chronos-2 built by the reference's own classes, with fixed random weights."""
    model = sized_model(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, context_length=64, patch=8, max_output_patches=4)
    randomize_(model, seed)
    # A trained model's quantiles do not cross; random weights' would. The quantile head is made to
    # give every level the same random map plus a small random part and a level-ordered offset, so
    # the tiny model's quantiles are ordered as a trained model's are.
    head = model.output_patch_embedding
    p = model.chronos_config.output_patch_size
    mid = QUANTILES.index(0.5)
    gen = torch.Generator().manual_seed(seed + 1)
    ppf = torch.distributions.Normal(0.0, 1.0).icdf(torch.tensor(QUANTILES))
    with torch.no_grad():
        for layer in (head.output_layer, head.residual_layer):
            w = layer.weight.view(len(QUANTILES), p, -1)
            b = layer.bias.view(len(QUANTILES), p)
            w.copy_(w[mid].unsqueeze(0) + 0.0005 * torch.randn(w.shape, generator=gen))
            b.copy_(b[mid].unsqueeze(0) + (1.0 if layer is head.output_layer else 0.0) * ppf.unsqueeze(1))
    return model


def save_checkpoint(model: Any, folder: Path) -> Path:
    """The model as a Hugging Face checkpoint folder (config.json, model.safetensors), the layout of
    amazon/chronos-2 that load_checkpoint reads."""
    model.save_pretrained(str(ensure_dir(folder)), safe_serialization=True)
    return folder


def base_size_model(seed: int) -> Any:
    """A base-size Chronos-2 (d_model 768, 12 layers, context 8192, patch 16) with random weights:
    the compute of a real checkpoint without its weights, for speed measurements only."""
    torch.manual_seed(seed)
    return sized_model(d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12, context_length=8192, patch=16, max_output_patches=64)


def load_checkpoint(path: str) -> Any:
    from chronos.chronos2 import Chronos2Pipeline

    return Chronos2Pipeline.from_pretrained(path, device_map="cpu", dtype=torch.float32).model.eval()


def export(model: Any, out_dir: Path, version: str, source: str) -> Path:
    from torch.export import Dim

    cfg = model.chronos_config
    if cfg.context_length % cfg.input_patch_size != 0 or cfg.input_patch_size != cfg.input_patch_stride:
        raise SystemExit("the adapter expects context_length a multiple of the patch size and non-overlapping patches")
    folder = ensure_dir(out_dir / MODEL_NAME)
    wrapper = OnnxForward(model).eval()
    p = cfg.output_patch_size
    rows, width = 3, 2 * cfg.input_patch_size
    context = torch.randn(rows, width) * 10 + 50
    context[0, :3] = float("nan")
    group_ids = torch.tensor([0, 0, 1])
    future = torch.full((rows, 2 * p), float("nan"))
    future[1] = torch.randn(2 * p)
    dynamic = {
        "context": {0: Dim("rows"), 1: Dim("context", min=1, max=cfg.context_length)},
        "group_ids": {0: Dim("rows")},
        "future_covariates": {0: Dim("rows"), 1: Dim("future", min=1, max=cfg.max_output_patches * p * 64)},
    }
    started = time.time()
    # draft_export: the reference checks `torch.isnan(future_covariates).any()` after masking, a
    # data-dependent branch torch.export cannot trace; the branch is never taken (masked values are
    # zeroed first), which the draft records as the example's path.
    with torch.no_grad():
        program = torch.export.draft_export(wrapper, (context, group_ids, future), dynamic_shapes=dynamic)
    onnx_path = save_onnx(program, (context, group_ids, future), list(dynamic), ["quantile_preds"], folder, MODEL_NAME, started)
    check_onnx(wrapper, onnx_path, cfg)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": cfg.context_length,
        "patch_size": cfg.input_patch_size,
        "output_patch_size": cfg.output_patch_size,
        "max_output_patches": cfg.max_output_patches,
        "quantile_levels": list(cfg.quantiles),
        "point_output": "median",
        # Past-only and known-future covariates are the model's own inputs; it has no static input.
        "covariates": ["historical", "future"],
        "options": {"batch_size": BATCH_SIZE, "rows_per_call": rows_per_call(cfg), "unrolled_quantiles": UNROLLED_QUANTILES},
        "exported_with": package_versions("torch", "onnx", "onnxscript", "chronos-forecasting", "transformers"),
    })


def check_onnx(wrapper: OnnxForward, path: Path, cfg: Any) -> None:
    """The ONNX graph against the reference forward on other shapes; error relative to the largest output."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(7)
    p = cfg.output_patch_size
    worst = 0.0
    for rows, patches, out_patches in [(1, 1, 1), (4, cfg.context_length // cfg.input_patch_size, cfg.max_output_patches), (6, 3, 2 * cfg.max_output_patches)]:
        context = (rng.randn(rows, patches * cfg.input_patch_size) * 20 + 100).astype(np.float32)
        context[0, : cfg.input_patch_size + 1] = np.nan
        group_ids = np.arange(rows) // 2
        future = np.full((rows, out_patches * p), np.nan, dtype=np.float32)
        if rows > 1:
            future[1] = rng.randn(out_patches * p)
        with torch.no_grad():
            expected = wrapper(torch.from_numpy(context), torch.from_numpy(group_ids), torch.from_numpy(future)).numpy()
        got = session.run(None, {"context": context, "group_ids": group_ids.astype(np.int64), "future_covariates": future})[0]
        worst = max(worst, float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max error relative to the largest output {worst:.2e}")


def reference_cases() -> list[dict[str, Any]]:
    """Fixed inputs: short, missing values, longer than the context, long horizons, covariates."""
    bank = series_bank(seed=11, count=40, min_len=5, max_len=120)
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 3, 30, 60)]
    missing[0][10:15] = np.nan
    missing[0][-9] = np.nan
    missing[1][:5] = np.nan
    missing[2][-1] = np.nan
    missing[2][:9] = np.nan  # a whole leading patch missing once left-padded
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 3, 3)[0], series_bank(7, 1, 7, 7)[0]]
    rng = np.random.RandomState(8)

    def with_covariates(target: np.ndarray, horizon: int) -> dict[str, Any]:
        n = len(target)
        t = np.arange(n + horizon)
        known = (np.sin(2 * np.pi * t / 12) * 5 + rng.normal(0, 0.5, n + horizon)).astype(np.float32)
        return {
            "target": target,
            "hist": {"load": (target * 0.3 + rng.normal(0, 1, n)).astype(np.float32)},
            "future": {"price": known, "promo": ((t % 5) == 0).astype(np.float32)},
        }

    levels = [0.1, 0.5, 0.9]
    odd_levels = [0.005, 0.05, 0.25, 0.5, 0.75, 0.95, 0.999]
    return [
        {"name": "basic", "horizon": 12, "quantiles": levels, "series": [{"target": s} for s in basic]},
        {"name": "missing_values", "horizon": 8, "quantiles": levels, "series": [{"target": s} for s in missing]},
        {"name": "short_histories", "horizon": 10, "quantiles": levels, "series": [{"target": s} for s in short]},
        {"name": "long_horizon", "horizon": 80, "quantiles": odd_levels, "series": [{"target": s} for s in basic[1:]]},
        {"name": "covariates", "horizon": 20, "quantiles": levels, "series": [with_covariates(s, 20) for s in basic[:2]]},
        {"name": "covariates_long_horizon", "horizon": 45, "quantiles": odd_levels, "series": [with_covariates(s, 45) for s in [basic[2], short[2]]]},
        {"name": "batch_of_40", "horizon": 16, "quantiles": levels, "series": [{"target": s} for s in bank]},
        # cross_learning=True (the API's is_global): every row of a batch in one group, and in the
        # roll-out one group per unrolled quantile across all series.
        {"name": "cross_learning", "horizon": 12, "quantiles": levels, "cross_learning": True, "series": [{"target": s} for s in bank[:12]]},
        {"name": "cross_learning_long_horizon", "horizon": 45, "quantiles": odd_levels, "cross_learning": True,
         "series": [with_covariates(s, 45) for s in [basic[0], missing[0], short[2]]]},
    ]


def record_reference(model: Any, out_dir: Path, seed: int) -> Path:
    """Forecasts of the reference pipeline for the fixed cases, written beside the ONNX file."""
    from chronos.chronos2 import Chronos2Pipeline

    pipeline = Chronos2Pipeline(model)
    cases = []
    for case in reference_cases():
        h = case["horizon"]
        inputs: list[Any] = []
        # The pipeline takes a list of tensors or a list of dicts, not both.
        as_dicts = any("hist" in s for s in case["series"])
        for s in case["series"]:
            if "hist" not in s:
                inputs.append({"target": s["target"]} if as_dicts else torch.from_numpy(s["target"]))
                continue
            n = len(s["target"])
            past = {**s["hist"], **{k: v[:n] for k, v in s["future"].items()}}
            fut = {k: v[n:] for k, v in s["future"].items()}
            inputs.append({"target": s["target"], "past_covariates": past, "future_covariates": fut})
        joint = case.get("cross_learning", False)
        raw = pipeline.predict(inputs, prediction_length=h, cross_learning=joint)  # [n_targets, Q, h] per series
        crossing = min(float(np.min(np.diff(r[0].numpy(), axis=0))) for r in raw)
        if crossing < 0:
            raise SystemExit(f"case {case['name']}: the tiny model's quantiles cross ({crossing:.3g}); change --seed")
        quantiles, mean = pipeline.predict_quantiles(inputs, prediction_length=h, quantile_levels=case["quantiles"], cross_learning=joint)
        cases.append({
            "name": case["name"],
            "cross_learning": joint,
            "horizon": h,
            "quantiles": case["quantiles"],
            "series": [
                {
                    "target": to_json_array(s["target"]),
                    **({"covariates": {
                        "hist": {k: to_json_array(v) for k, v in s["hist"].items()},
                        "future": {k: to_json_array(v) for k, v in s["future"].items()},
                    }} if "hist" in s else {}),
                }
                for s in case["series"]
            ],
            "expected": {
                "model_quantiles": [to_json_array(r[0]) for r in raw],
                "quantiles": [to_json_array(q[0].T) for q in quantiles],
                "mean": [to_json_array(m[0]) for m in mean],
            },
        })
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "chronos.chronos2.Chronos2Pipeline.predict / predict_quantiles",
        "seed": seed,
        "versions": package_versions("torch", "chronos-forecasting", "transformers"),
        "cases": cases,
    })
