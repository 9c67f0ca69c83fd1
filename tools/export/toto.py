"""Toto 2.0 (DataDog/toto, PyPI package `toto-2` 2.0.0, module `toto2`) to ONNX.

`toto-2` needs Python >= 3.12: this family runs in an environment of its own
(tools/export/README.md, requirements-toto.txt). Toto 1.0 (`toto-ts`, Student-t mixture head,
autoregressive sampling) is a different architecture and is not what `toto-2` serves.

What the ONNX graph holds: the network of `Toto2Model` on prepared patches: `patch_proj` (the
input residual MLP over a patch's scaled values and its missing-value indicator), the
`VariateTimeTransformerDecoder` (time layers with rotary positions and the reference's attention
masks built from the patch group ids, variate layers), and the quantile head, in the scaled
space. What the service's adapter (models/families/foundation/toto.ts) does, as the reference's GluonTS
pipeline (`Toto2GluonTSModel` with its default config) and `Toto2Model.forecast` with
decode_block_size None do: forward fill of missing values, the context cut to
`context_length - (ceil(h / patch) - 1) * patch` (TFTInstanceSplitter), left padding, the last
context patch forced observed, the causal patch scaler (float64), the short-history fallback
statistics (scaler_fallback_min_obs 8), the arcsinh, the whole horizon as masked patches in one
pass (contiguous patch masking), sinh and the inverse scaling, the quantile cap (K = 1e4) and the
sort of the 9 levels.

Graph contract (float32 but group_ids):
  patches    [rows, S, patch]  scaled values, asinh((x - loc) / scale), 0 where unobserved
  missing    [rows, S, patch]  1 where unobserved (masked context values, every horizon value)
  group_ids  [rows, S] int64   0, or -1 for a context patch with no observed value
  -> quantiles [rows, S, patch, 9]  the next patch's levels 0.1..0.9 at every position, scaled
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ensure_dir, package_versions, save_onnx, series_bank, to_json_array, write_manifest, write_reference

MODEL_NAME = "toto-2"
QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]  # QuantileKnotsOutputHead's knots
TINY_CONTEXT = 64  # export.py's context of every tiny fixture
REAL_CONTEXT = 2048
TINY_POSITIONS = 256  # patches the tiny fixture's graph takes (context and horizon together)


def gluonts_config_defaults() -> dict[str, Any]:
    """The forecast options of the reference pipeline, from `Toto2GluonTSModelConfig`'s defaults."""
    from toto2 import Toto2GluonTSModelConfig

    c = Toto2GluonTSModelConfig(prediction_length=1, context_length=1, target_dim=1)
    return {
        "imputation": c.imputation_internal,
        "scaler_fallback_min_obs": c.scaler_fallback_min_obs,
        "quantile_real_cap_k": c.quantile_real_cap_k,
        "decode_block_size": c.decode_block_size,
        "has_missing_values": c.has_missing_values,
    }


class OnnxForward(torch.nn.Module):
    """`Toto2Model`'s network on prepared patches of univariate rows (one variate per row)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, patches: torch.Tensor, missing: torch.Tensor, group_ids: torch.Tensor) -> torch.Tensor:
        m = self.model
        x = m.patch_proj(torch.cat([patches, missing], dim=-1)).unsqueeze(1)  # [rows, 1, S, d]
        # has_missing_values=True, as Toto2GluonTSModelConfig: explicit masks from the group ids.
        x = m.transformer(x, group_ids=group_ids.unsqueeze(1), has_missing_values=True)
        q = m.output_head(x[:, 0], q=None)  # [9, rows, S, patch]
        return q.permute(1, 2, 3, 0)


def build(config: dict[str, Any], context_length: int) -> Any:
    from toto2 import Toto2Model, Toto2ModelConfig

    ratio = Toto2ModelConfig.compute_residual_attn_ratio(context_length, config["patch_size"])
    return Toto2Model(Toto2ModelConfig(**config, residual_attn_ratio=ratio)).eval()


def tiny_model(seed: int) -> Any:
    """A tiny Toto 2.0 of the reference's own classes: d_model 32, 4 layers (a variate layer after
    every time layer), patch 8, xPos rotary positions. The reference's own initialisation (unit-
    scaled weights, seeded), with the zero-initialised biases and norm weights drawn at random."""
    torch.manual_seed(seed)
    model = build(dict(patch_size=8, d_model=32, num_heads=4, num_layers=4, layer_group_size=2, num_variate_layers_per_group=1,
                       variate_layer_first=False, use_xpos=True, attn_bias=True, mlp_bias=True), TINY_CONTEXT)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))
    model.service_context_length = TINY_CONTEXT
    model.fixture_positions = TINY_POSITIONS
    return model


def load_checkpoint(path: str) -> Any:
    """A local Hugging Face snapshot folder of a Toto 2.0 checkpoint (config.json, model.safetensors)."""
    from toto2 import Toto2Model

    model = Toto2Model.from_pretrained(str(Path(path).resolve()), map_location="cpu")
    if model.config.num_output_patches != 1:
        raise SystemExit(f"num_output_patches {model.config.num_output_patches}: only 1 is supported (the forecast's default head layout)")
    model.service_context_length = REAL_CONTEXT
    return model.eval()


# Datadog/Toto-2.0-22m's architecture, the fields of its published config.json (the package
# itself has no size presets); `build` recomputes `residual_attn_ratio` for the context, as the
# checkpoints' own value is for 4096 steps. The 4m checkpoint differs in d_model 256, d_ff 688,
# 4 heads, groups and layers.
TOTO2_22M = dict(
    patch_size=32, d_model=512, d_ff=1368, num_heads=8, num_groups=8, num_layers=6, layer_group_size=6,
    num_variate_layers_per_group=1, variate_layer_first=False, num_output_patches=1, pre_norm=True,
    attn_bias=True, mlp_bias=False, qk_dim=64, v_dim=64, qk_norm=False, qk_norm_include_weight=False,
    norm_include_weight=False, per_dim_scale=True, use_xpos=True, residual_mult=0.75, dropout_p=0.0, norm_eps=1e-4,
)


def base_size_model(seed: int) -> Any:
    """Toto-2.0-22m's architecture with the reference's own seeded initialisation: for speed
    measurements (`npm run bench -- onnx --models-dir`), never for forecasts."""
    torch.manual_seed(seed)
    model = build(TOTO2_22M, REAL_CONTEXT)
    model.service_context_length = REAL_CONTEXT
    return model


def limit_positions(model: Any, positions: int) -> int:
    """Cuts the rotary tables (`RotaryProjection`'s cos and sin, 8192 positions) to `positions`
    patches, the longest sequence the graph then takes; the tiny fixture's 8192-row tables would
    be most of its file. Returns the limit in force."""
    from toto2.model import RotaryProjection

    limit = positions
    for module in model.modules():
        if isinstance(module, RotaryProjection):
            module.cos = module.cos[:positions].clone()
            module.sin = module.sin[:positions].clone()
            limit = min(limit, module.cos.shape[0])
    return limit


def export(model: Any, out_dir: Path, version: str, source: str, context_length: int) -> Path:
    from torch.export import Dim

    p = model.config.patch_size
    model.service_context_length = context_length  # what reference_forecast then uses
    max_positions = limit_positions(model, getattr(model, "fixture_positions", 1 << 30))
    if context_length % p != 0:
        raise SystemExit(f"--max-context must be a multiple of the patch size {p}")
    folder = ensure_dir(out_dir / MODEL_NAME)
    wrapper = OnnxForward(model).eval()
    rows, seq = 3, 6
    patches = torch.randn(rows, seq, p)
    missing = torch.zeros(rows, seq, p)
    missing[:, -2:] = 1.0
    group_ids = torch.zeros(rows, seq, dtype=torch.long)
    group_ids[0, 0] = -1
    dynamic = {"patches": {0: Dim("rows"), 1: Dim("seq", min=2)}, "missing": {0: Dim("rows"), 1: Dim("seq", min=2)}, "group_ids": {0: Dim("rows"), 1: Dim("seq", min=2)}}
    started = time.time()
    with torch.no_grad():
        program = torch.export.export(wrapper, (patches, missing, group_ids), dynamic_shapes=dynamic, strict=False)
    onnx_path = save_onnx(program, (patches, missing, group_ids), list(dynamic), ["quantiles"], folder, MODEL_NAME, started)
    int64_gather_indices(onnx_path)
    check_onnx(wrapper, onnx_path, p)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": context_length,
        "patch_size": p,
        "max_positions": max_positions,
        "quantile_levels": QUANTILES,
        "point_output": "median",
        "covariates": [],
        "forecast_config": {k: v for k, v in gluonts_config_defaults().items() if k in ("imputation", "scaler_fallback_min_obs", "quantile_real_cap_k")},
        "exported_with": package_versions("torch", "onnx", "onnxscript", "toto-2", "dd-unit-scaling", "gluonts"),
    })


def int64_gather_indices(path: Path) -> None:
    """The rotary tables are indexed by int32 positions (`RotaryProjection.forward`), which the
    exporter writes as GatherND on int32 indices; ONNX's GatherND takes int64 only."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(path))
    nodes = []
    cast_done: set[str] = set()
    for node in model.graph.node:
        if node.op_type == "GatherND":
            cast = f"{node.input[1]}__as_int64"
            if cast not in cast_done:
                nodes.append(helper.make_node("Cast", [node.input[1]], [cast], to=TensorProto.INT64, name=f"{cast}__cast"))
                cast_done.add(cast)
            node.input[1] = cast
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def check_onnx(wrapper: OnnxForward, path: Path, p: int) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(7)
    worst = 0.0
    for rows, seq in ((1, 3), (5, 17), (2, 40)):
        patches = rng.randn(rows, seq, p).astype(np.float32)
        missing = (rng.rand(rows, seq, p) < 0.1).astype(np.float32)
        missing[:, -2:] = 1.0
        patches[missing == 1] = 0.0
        group_ids = np.zeros((rows, seq), dtype=np.int64)
        group_ids[0, : seq // 3] = -1
        with torch.no_grad():
            expected = wrapper(torch.from_numpy(patches), torch.from_numpy(missing), torch.from_numpy(group_ids)).numpy()
        got = session.run(None, {"patches": patches, "missing": missing, "group_ids": group_ids})[0]
        worst = max(worst, float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max error relative to the largest output {worst:.2e}")


def reference_forecast(model: Any, histories: list[np.ndarray], horizon: int, context_length: int | None = None, batch_size: int = 256, options: dict[str, Any] | None = None) -> np.ndarray:
    """The reference pipeline on a batch of series, on the CPU: `Toto2GluonTSModel` with its
    default config (ffill imputation, decode_block_size None, scaler_fallback_min_obs 8,
    quantile_real_cap_k 1e4) and its GluonTS predictor, with the context length the model was
    exported with (the manifest's context_length; 64 for the tiny fixture) unless given. Returns
    [series, 9 levels, horizon]; the point forecast is level 0.5 (index 4). `options` overrides
    fields of the config (the fixture's quantile-cap case).

        reference_forecast(toto.tiny_model(0), [np.arange(50.0), np.ones(9)], 24)"""
    import pandas as pd
    from toto2 import Toto2GluonTSModel, Toto2GluonTSModelConfig

    context = context_length or getattr(model, "service_context_length", REAL_CONTEXT)
    config = Toto2GluonTSModelConfig(prediction_length=horizon, context_length=context, target_dim=1, **(options or {}))
    predictor = Toto2GluonTSModel(model, config).create_predictor(batch_size=batch_size, device="cpu")
    start = pd.Period("2024-01-01 00:00", freq="h")
    data = [{"start": start, "target": np.asarray(h, dtype=np.float32), "item_id": str(i)} for i, h in enumerate(histories)]
    forecasts = list(predictor.predict(data))
    return np.stack([np.stack([f.quantile(q) for q in QUANTILES]) for f in forecasts])


def with_gaps(series: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    out = series.copy()
    for a, b in spans:
        out[a:b] = np.nan
    return out


def reference_cases() -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 200, 200)[0]]
    gappy = series_bank(4, 5, 40, 90)
    missing = [
        with_gaps(gappy[0], [(10, 15)]),           # inner gap, forward filled and masked
        with_gaps(gappy[1][:30], [(0, 7)]),        # leading gap: zeros, masked, behind the padding
        with_gaps(gappy[2], [(len(gappy[2]) - 3, len(gappy[2]))]),  # in the last patch, which counts as observed
        with_gaps(gappy[3], [(16, 32)]),           # two whole patches unobserved: group id -1
        with_gaps(gappy[4], [(5, 9), (20, 21), (30, 34)]),
    ]
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 3, 3)[0], series_bank(7, 1, 11, 11)[0], series_bank(8, 1, 20, 20)[0]]
    flat = [np.full(40, 7.0, dtype=np.float32), np.concatenate([np.zeros(30, np.float32), np.ones(10, np.float32) * 3])]
    return [
        {"name": "basic", "horizon": 12, "series": basic},
        {"name": "horizon_within_a_patch", "horizon": 5, "series": basic},
        {"name": "missing_values", "horizon": 16, "series": missing},
        {"name": "short_histories", "horizon": 10, "series": short},
        {"name": "flat_series", "horizon": 8, "series": flat},
        # The context shrinks as the horizon grows (to 32 here), down to one patch past it.
        {"name": "long_horizon", "horizon": 40, "series": basic},
        {"name": "longer_than_context", "horizon": 100, "series": basic[1:]},
        {"name": "batch_of_40", "horizon": 24, "series": series_bank(seed=11, count=40, min_len=5, max_len=300)},
        # The clip to the observed range widened by K last-context scales binds only where the
        # scale is tiny (a constant series: the 1e-6 floor) and K small; here K is 0.001.
        {"name": "quantile_cap", "horizon": 12, "options": {"quantile_real_cap_k": 1e-3}, "series": [
            np.zeros(40, np.float32), np.full(30, 7.0, np.float32), np.r_[np.zeros(30), np.full(10, 1e-3)].astype(np.float32), basic[0],
        ]},
    ]


def record_reference(model: Any, out_dir: Path, seed: int, context_length: int) -> Path:
    """Forecasts of the reference GluonTS pipeline for the fixed cases, written beside the ONNX file."""
    cases = []
    for case in reference_cases():
        h = case["horizon"]
        q = reference_forecast(model, case["series"], h, context_length, options=case.get("options"))
        cases.append({
            "name": case["name"],
            "horizon": h,
            **({"forecast_config": case["options"]} if "options" in case else {}),
            "series": [{"target": to_json_array(s)} for s in case["series"]],
            # [series][level][step], levels 0.1..0.9; the point forecast is level 0.5
            "expected": {"quantiles": [to_json_array(x) for x in q]},
        })
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "toto2.Toto2GluonTSModel(...).create_predictor().predict (toto-2 2.0.0), default Toto2GluonTSModelConfig",
        "seed": seed,
        "context_length": context_length,
        "forecast_config": gluonts_config_defaults(),
        "versions": package_versions("torch", "toto-2", "gluonts"),
        "cases": cases,
    })


