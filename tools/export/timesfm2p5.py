"""TimesFM 2.5 (google-research/timesfm, package `timesfm`) to ONNX.

What the ONNX graph holds: the steps of `TimesFM_2p5_200M_torch_module.forward` of the reference
(tokenizer, the causal transformer stack with rotary positions and padding masks, the point and
quantile heads) on already normalised patches, the heads applied to the last patch only. What the
service's adapter (models/families/foundation/timesfm2p5.ts) does, as `TimesFM_2p5.forecast` and its
compiled decode do: leading-NaN strip and linear interpolation of missing values, context
truncation and padding, the global and per-patch (running) normalisation, the autoregressive
roll-out past the output patch, flip invariance, the continuous quantile head, quantile-crossing
fix and the positivity clamp.

The reference decodes with a key/value cache; the adapter re-runs the whole sequence at each
roll-out step instead, which computes the same thing (causal attention, each patch normalised by
its own running statistics) without cache tensors in the graph.

Graph contract:
  inputs   [rows, N, patch_size] float32  normalised patches, masked values 0
  masks    [rows, N, patch_size] bool     true = padding/missing
  -> point_last            [rows, output_patch_len * 10]      last patch, normalised scale
  -> quantile_spread_last  [rows, output_quantile_len * 10]   last patch, normalised scale
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ensure_dir, numeric_xreg_cases, package_versions, randomize_, series_bank, to_json_array, write_manifest, save_onnx, write_reference

MODEL_NAME = "timesfm-2p5"
# The flags the reference's README compiles TimesFM 2.5 with.
FORECAST_FLAGS = {
    "normalize_inputs": True,
    "use_continuous_quantile_head": True,
    "force_flip_invariance": True,
    "infer_is_positive": True,
    "fix_quantile_crossing": True,
}


class OnnxForward(torch.nn.Module):
    """The reference forward's steps, with the output heads applied to the last patch only.

    `TimesFM_2p5_200M_torch_module.forward` runs the heads on every patch; decoding reads only the
    last one's, and the heads act on each patch alone, so the rest is skipped (check_onnx compares
    with the full forward).
    """

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module

    def forward(self, inputs: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        m = self.module
        embeddings = m.tokenizer(torch.cat([inputs, masks.to(inputs.dtype)], dim=-1))
        for layer in m.stacked_xf:
            embeddings, _ = layer(embeddings, masks[..., -1], None)
        last = embeddings[:, -1]
        return m.output_projection_point(last), m.output_projection_quantiles(last)


def tiny_model(seed: int) -> Any:
    """A tiny TimesFM 2.5 built by the reference's own classes, with fixed random weights."""
    from timesfm import configs as C
    from timesfm.timesfm_2p5 import timesfm_2p5_base, timesfm_2p5_torch

    definition = timesfm_2p5_base.TimesFM_2p5_200M_Definition(
        input_patch_len=8,
        output_patch_len=16,
        output_quantile_len=64,
        tokenizer=C.ResidualBlockConfig(input_dims=16, hidden_dims=32, output_dims=32, use_bias=True, activation="swish"),
        stacked_transformers=C.StackedTransformersConfig(
            num_layers=2,
            transformer=C.TransformerConfig(
                model_dims=32, hidden_dims=32, num_heads=4, attention_norm="rms", feedforward_norm="rms", qk_norm="rms",
                use_bias=False, use_rotary_position_embeddings=True, ff_activation="swish", fuse_qkv=True,
            ),
        ),
        output_projection_point=C.ResidualBlockConfig(input_dims=32, hidden_dims=32, output_dims=16 * 10, use_bias=False, activation="swish"),
        output_projection_quantiles=C.ResidualBlockConfig(input_dims=32, hidden_dims=32, output_dims=64 * 10, use_bias=False, activation="swish"),
    )

    class TinyModule(timesfm_2p5_torch.TimesFM_2p5_200M_torch_module):
        config = definition

    module = TinyModule().eval()
    randomize_(module, seed)
    return module


def base_size_model(seed: int) -> Any:
    """TimesFM 2.5's 200M architecture with random weights: the compute of the real checkpoint
    without its weights, for speed measurements only."""
    from timesfm.timesfm_2p5 import timesfm_2p5_torch

    module = timesfm_2p5_torch.TimesFM_2p5_200M_torch_module().eval()
    randomize_(module, seed)
    return module


def load_checkpoint(path: str) -> Any:
    from timesfm.timesfm_2p5 import timesfm_2p5_torch

    wrapper = timesfm_2p5_torch.TimesFM_2p5_200M_torch(torch_compile=False)
    wrapper.load_checkpoint(path, torch_compile=False)
    return wrapper.model.eval()


def definition_of(module: Any) -> Any:
    return module.config


def export(module: Any, out_dir: Path, version: str, source: str, max_context: int) -> Path:
    from torch.export import Dim

    d = definition_of(module)
    if max_context % d.input_patch_len != 0:
        raise SystemExit(f"--max-context must be a multiple of the patch length {d.input_patch_len}")
    folder = ensure_dir(out_dir / MODEL_NAME)
    wrapper = OnnxForward(module).eval()
    rows, patches = 3, 4
    inputs = torch.randn(rows, patches, d.input_patch_len)
    masks = torch.zeros(rows, patches, d.input_patch_len, dtype=torch.bool)
    masks[0, :2] = True
    dynamic = {"inputs": {0: Dim("rows"), 1: Dim("patches")}, "masks": {0: Dim("rows"), 1: Dim("patches")}}
    started = time.time()
    with torch.no_grad():
        program = torch.export.export(wrapper, (inputs, masks), dynamic_shapes=dynamic, strict=False)
    onnx_path = save_onnx(program, (inputs, masks), list(dynamic), ["point_last", "quantile_spread_last"], folder, MODEL_NAME, started)
    check_onnx(wrapper, onnx_path, d)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": max_context,
        "patch_size": d.input_patch_len,
        "output_patch_len": d.output_patch_len,
        "output_quantile_len": d.output_quantile_len,
        "context_limit": d.context_limit,
        "decode_index": d.decode_index,
        "quantile_levels": list(d.quantiles),
        "point_output": "median",
        "covariates": [],
        "forecast_config": FORECAST_FLAGS,
        "exported_with": package_versions("torch", "onnx", "onnxscript", "timesfm"),
    })


def check_onnx(wrapper: OnnxForward, path: Path, d: Any) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(7)
    worst = 0.0
    for rows, patches in [(1, 1), (5, 9), (2, 30)]:
        inputs = rng.randn(rows, patches, d.input_patch_len).astype(np.float32)
        masks = np.zeros_like(inputs, dtype=bool)
        masks[0, : patches // 2] = True
        inputs[masks] = 0.0
        with torch.no_grad():
            (_, _, point, spread), _ = wrapper.module(torch.from_numpy(inputs), torch.from_numpy(masks))
            expected = [point[:, -1].numpy(), spread[:, -1].numpy()]
        got = session.run(None, {"inputs": inputs, "masks": masks})
        for g, e in zip(got, expected):
            worst = max(worst, float(np.max(np.abs(g - e)) / np.max(np.abs(e))))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max error relative to the largest output {worst:.2e}")


def reference_cases() -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 4, 30, 60)]
    missing[0][10:15] = np.nan
    missing[1][:5] = np.nan
    missing[2][-3:] = np.nan
    missing[3][:] = np.nan
    missing[3][7] = 12.5  # a single observed value
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 3, 3)[0], series_bank(7, 1, 9, 9)[0]]
    constant = [np.full(20, 5.0, dtype=np.float32)]
    negative = [s - 200.0 for s in series_bank(9, 2, 30, 70)]
    bank = series_bank(seed=11, count=40, min_len=5, max_len=120)
    return [
        {"name": "basic", "horizon": 12, "series": basic},
        {"name": "missing_values", "horizon": 8, "series": missing},
        {"name": "short_histories", "horizon": 10, "series": short},
        {"name": "long_horizon", "horizon": 40, "series": basic[1:]},
        {"name": "beyond_quantile_head", "horizon": 70, "series": [basic[0]]},
        {"name": "constant", "horizon": 8, "series": constant},
        {"name": "negative_values", "horizon": 20, "series": negative},
        {"name": "batch_of_40", "horizon": 16, "series": bank},
    ]


def compile_for(model: Any, d: Any, horizon: int, max_context: int, batch: int, **extra: Any) -> dict[str, bool]:
    """Compiles the reference for a horizon with the README's flags; returns the flags used. The
    reference refuses the continuous quantile head past its length; the adapter then uses the same
    flags without it, as a caller of the reference must."""
    import timesfm

    max_horizon = math.ceil(horizon / d.output_patch_len) * d.output_patch_len
    flags = dict(FORECAST_FLAGS)
    if max_horizon > d.output_quantile_len:
        flags["use_continuous_quantile_head"] = False
    model.compile(timesfm.ForecastConfig(max_context=max_context, max_horizon=max_horizon, per_core_batch_size=batch, **extra, **flags))
    return flags


def xreg_cases() -> list[dict[str, Any]]:
    """Series with known-future numeric covariates (over the history and the horizon)."""
    rng = np.random.RandomState(12)
    out = numeric_xreg_cases(rng)
    # Categorical covariates, one-hot encoded by the reference (sklearn, first category dropped,
    # categories unseen in the context ignored): a day type with a level the context never shows.
    series = []
    for n in (45, 70):
        t = np.arange(n + 12)
        day = np.array(["weekday", "weekend", "holiday"], dtype=object)[np.where(t % 7 >= 5, 1, 0)]
        day[n + 3] = "strike"  # only in the horizon: ignored, as an all-zero row
        price = (10 + np.cos(2 * np.pi * t / 9) * 2 + rng.normal(0, 0.2, n + 12)).astype(np.float32)
        target = (30 + 1.5 * price[:n] + 12 * (day[:n] == "weekend") + rng.normal(0, 1, n)).astype(np.float32)
        series.append({"target": target, "future": {"price": price}, "categorical": {"day": day}})
    out.append({"name": "xreg_categorical", "horizon": 12, "series": series})
    return out


def record_xreg_cases(model: Any, d: Any, max_context: int) -> list[dict[str, Any]]:
    """`forecast_with_covariates` with the reference's defaults: xreg_mode "xreg + timesfm", targets
    normalised per input, ridge 0 (one linear fit over the whole batch, then TimesFM on the residuals)."""
    cases = []
    for case in xreg_cases():
        h = case["horizon"]
        # forecast_with_covariates needs the backcast of the compiled decode.
        flags = compile_for(model, d, h, max_context, len(case["series"]), return_backcast=True)
        names = sorted(case["series"][0]["future"])
        categorical = sorted(case["series"][0].get("categorical", {}))
        point, quantiles = model.forecast_with_covariates(
            inputs=[s["target"] for s in case["series"]],
            dynamic_numerical_covariates={k: [s["future"][k] for s in case["series"]] for k in names},
            dynamic_categorical_covariates={k: [list(s["categorical"][k]) for s in case["series"]] for k in categorical} or None,
        )
        cases.append({
            "name": case["name"],
            "horizon": h,
            "flags": flags,
            "xreg": {"mode": "xreg + timesfm", "normalize_xreg_target_per_input": True, "ridge": 0.0},
            "series": [
                {
                    "target": to_json_array(s["target"]),
                    "future": {**{k: to_json_array(v) for k, v in s["future"].items()}, **{k: list(v) for k, v in s.get("categorical", {}).items()}},
                }
                for s in case["series"]
            ],
            "expected": {
                "point": [to_json_array(np.asarray(p)) for p in point],
                "quantiles": [to_json_array(np.asarray(q).T) for q in quantiles],
            },
        })
    return cases


def record_reference(module: Any, out_dir: Path, seed: int, max_context: int) -> Path:
    """Forecasts of the reference `TimesFM_2p5.forecast` for the fixed cases."""
    from timesfm.timesfm_2p5 import timesfm_2p5_torch

    d = definition_of(module)
    model = timesfm_2p5_torch.TimesFM_2p5_200M_torch(torch_compile=False)
    model.model = module
    cases = []
    for case in reference_cases():
        h = case["horizon"]
        flags = compile_for(model, d, h, max_context, len(case["series"]))
        point, quantiles = model.forecast(horizon=h, inputs=[np.array(s, dtype=np.float32) for s in case["series"]])
        cases.append({
            "name": case["name"],
            "horizon": h,
            "flags": flags,
            "series": [{"target": to_json_array(s)} for s in case["series"]],
            "expected": {
                "point": [to_json_array(p) for p in point],
                # [series][channel][step]: channel 0 the mean head, 1..9 the levels 0.1..0.9
                "quantiles": [to_json_array(q.T) for q in quantiles],
            },
        })
    cases.extend(record_xreg_cases(model, d, max_context))
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "timesfm.TimesFM_2p5_200M_torch.forecast (compiled decode, torch); forecast_with_covariates for the xreg cases",
        "seed": seed,
        "max_context": max_context,
        "versions": package_versions("torch", "timesfm"),
        "cases": cases,
    })
