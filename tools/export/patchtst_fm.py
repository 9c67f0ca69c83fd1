"""PatchTST-FM (IBM granite-tsfm, package `granite-tsfm` 0.3.11, `tsfm_public.models.patchtst_fm`) to ONNX.

granite-tsfm wants torch 2.10-2.11 and transformers < 6: it gets a virtualenv of its own
(tools/export/README.md, requirements-patchtst-fm.txt).

The reference forecasts as the reconstruction of a masked horizon: `PatchTSTFMForPrediction.forward`
with a list of series (`forecast_single_step`) puts each series' last values and `fl` masked
forecast slots into one window of `context_length` steps, left-padded, and reads the quantile head
over the slots. `fl = max(horizon, d_patch * max(pretrain_mask_cont (doubled with randomize_cpm), 2))`
and the history kept is its last `context_length - fl` values, so one pass serves every horizon
below `context_length`; there is no roll-out (past it both entry points fail with a shape error):
the service refuses longer horizons. Missing values are masked like the slots, so the same pass imputes them.

What the ONNX graph holds: the steps of `PatchTSTFMModel.forward` (non-strided branch) and its
`decode` on the trailing patches of the window: the masked RevIN with arcsinh (normalization.py),
zeroing of masked steps, the input residual block over [values, observed], learned positions
(offset so the window ends at `context_length`, as the reference's padding-pruning does), the
transformer blocks with the padding mask, the output block, the quantile construction (base +
cumulative softplus) and the inverse RevIN, for the last `F` steps (F = forecast_slots' length).
What the adapter (models/families/foundation/patchtst-fm.ts) does: the cut to `context_length - fl`, the
padding and masks, batching, the first `horizon` slots, the requested quantiles, and the point
forecast: the reference's `prediction_outputs`, the mean by integrating the quantile function
(trapezoids over the levels plus the two tails).

The wrapper calls the reference's modules (`norm_fn`, `in_layer`, `pos_embed`, `blocks`,
`out_layer`, `make_attn_mask`) in `decode`'s order rather than `decode` itself, whose
`if t_pad_mask.any()` is a branch on data that torch.export cannot trace (without padding its
mask is all zeros, the same as none). One change to the reference's steps, for ONNX:
`make_attn_mask` also masks every query row of a padding patch, and torch's attention returns
zeros for such a fully masked row where ONNX's softmax returns NaN, which the next layer would
spread through 0 * NaN. The graph masks padding keys only: the rows of padding patches then
attend to the series, rows that the forecast never reads (they are keys of no one, and their
outputs lie in the padding); check_onnx compares with the unchanged reference forward.

Graph contract:
  values          [rows, N, d_patch] float32  the window's last N patches; 0 where masked
  masked          [rows, N, d_patch] bool     padding, missing value or forecast slot
  padding         [rows, N, d_patch] bool     left padding
  forecast_slots  [F] float32                 only its length is read: the last F steps are returned
  -> quantiles    [rows, Q, F] float32        the series' scale, Q = len(quantile_levels)
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ensure_dir, package_versions, randomize_, series_bank, to_json_array, write_manifest, save_onnx, write_reference

MODEL_NAME = "patchtst-fm"
# Levels recorded in reference.json for every case but `basic` (which has all 99): enough to check
# the head's channels without a fixture of megabytes.
RECORDED_LEVELS = [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99]


def min_forecast_length(config: Any) -> int:
    """The slots the reference always reconstructs (`PatchTSTFMForPrediction.forward`'s `fl`)."""
    span = config.pretrain_mask_cont * 2 if config.randomize_cpm else config.pretrain_mask_cont
    return config.d_patch * max(span, 2)


class OnnxForward(torch.nn.Module):
    """`PatchTSTFMModel.forward` and `decode` on the trailing patches, returning the last F steps."""

    def __init__(self, backbone: Any) -> None:
        super().__init__()
        self.backbone = backbone

    def forward(self, values: torch.Tensor, masked: torch.Tensor, padding: torch.Tensor, forecast_slots: torch.Tensor) -> torch.Tensor:
        from tsfm_public.models.patchtst_fm.basic import make_attn_mask

        b = self.backbone
        c = b.config
        rows, patches, d = values.shape
        flat_mask = masked.reshape(rows, patches * d)
        normed = b.norm_fn.fit_transform(values.reshape(rows, patches * d), mask=flat_mask)
        x = torch.where(flat_mask, torch.zeros_like(normed), normed).reshape(rows, patches, d)
        h = b.in_layer(torch.cat([x, ~masked], dim=-1))
        pad_patch = padding.float().mean(dim=-1).gt(0.9)
        # Padding keys only (see the module docstring); rows of padding patches are never read.
        attn_mask = make_attn_mask(torch.zeros_like(pad_patch), pad_patch).unsqueeze(1)
        h = b.pos_embed(h, offset=c.n_patch - patches)
        for block in b.blocks:
            h = block(h, attn_mask)
        h = b.out_layer(b.prehead_norm(h) if b.prehead_norm is not None else h)
        raw = h.reshape(rows, patches, c.num_quantile + 1, d).permute(0, 2, 1, 3)
        q = raw[:, :1] + torch.cumsum(torch.nn.functional.softplus(raw[:, 1:]) / c.num_quantile, dim=1)
        q = q.reshape(rows, c.num_quantile, patches * d)[:, :, patches * d - forecast_slots.shape[0]:]
        return b.norm_fn.inverse_transform(q)


def quiet_logging() -> None:
    """tsfm_public's import sets the root logger to INFO (its TSFM_PYTHON_LOGGING_LEVEL), which
    floods the export with the ONNX optimiser's messages: back to warnings."""
    logging.getLogger().setLevel(logging.WARNING)


def build(seed: int, **sizes: Any) -> Any:
    from tsfm_public.models.patchtst_fm import PatchTSTFMConfig, PatchTSTFMForPrediction

    quiet_logging()
    torch.manual_seed(seed)
    return PatchTSTFMForPrediction(PatchTSTFMConfig(**sizes)).eval()


def randomize_patchtst_(model: Any, seed: int) -> None:
    """Fixed random weights (common.randomize_), LayerNorm scales near 1 (randomize_ goes by
    parameter names, and these are norm1/norm2), and an output block scaled so that the
    normalised quantiles stay within a few units: the inverse RevIN applies sinh to them."""
    randomize_(model, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm) and module.weight is not None:
                module.weight.copy_(1.0 + 0.1 * torch.randn(module.weight.shape, generator=gen))
                module.bias.copy_(0.05 * torch.randn(module.bias.shape, generator=gen))
        for p in model.backbone.out_layer.parameters():
            p.mul_(0.3)


def tiny_model(seed: int) -> Any:
    """A tiny PatchTST-FM of the reference's classes: context 256, the released patch of 16 (so a
    patch of 15 padding steps and one value is masked as padding, the reference's > 90% rule) and
    99 quantiles, d_model 32, 2 layers; pretrain_mask_cont 2: every pass reconstructs 32 slots or more."""
    model = build(seed, context_length=256, d_patch=16, d_model=32, n_head=4, n_layer=2, num_quantile=99, pretrain_mask_cont=2)
    randomize_patchtst_(model, seed)
    return model


def base_size_model(seed: int) -> Any:
    """The size the model card gives for patchtst-fm-r1 (context 8192, patch 16, d_model 1024,
    99 quantiles, about 250M parameters in the transformer: 20 layers of 1024) with random
    weights: its compute, for speed measurements only."""
    model = build(seed, context_length=8192, d_patch=16, d_model=1024, n_head=16, n_layer=20, num_quantile=99)
    randomize_patchtst_(model, seed)
    return model


def load_checkpoint(path: str) -> Any:
    """A local folder of a Hugging Face PatchTST-FM snapshot (config.json, model.safetensors)."""
    from tsfm_public.models.patchtst_fm import PatchTSTFMForPrediction

    quiet_logging()
    return PatchTSTFMForPrediction.from_pretrained(path, local_files_only=True).eval()


def check_supported(config: Any) -> None:
    """The graph follows the transformer blocks without striding, the released configuration."""
    if config.block_type != "transformer" or config.patch_stride not in (None, config.d_patch):
        raise SystemExit(f"this export follows block_type 'transformer' without patch striding; the checkpoint has block_type {config.block_type!r}, patch_stride {config.patch_stride}")
    if config.context_length % config.d_patch != 0:
        raise SystemExit(f"context_length {config.context_length} is not a multiple of d_patch {config.d_patch}")


def export(model: Any, out_dir: Path, version: str, source: str) -> Path:
    from torch.export import Dim

    c = model.config
    check_supported(c)
    folder = ensure_dir(out_dir / MODEL_NAME)
    wrapper = OnnxForward(model.backbone).eval()
    rows, patches, steps = 3, 5, 2 * c.d_patch + 3
    values = torch.randn(rows, patches, c.d_patch)
    masked = torch.zeros(rows, patches, c.d_patch, dtype=torch.bool)
    padding = torch.zeros(rows, patches, c.d_patch, dtype=torch.bool)
    padding[0, :2] = True
    masked[:, :, :] = padding
    masked.view(rows, -1)[:, -steps:] = True
    slots = torch.zeros(steps)
    dynamic = {
        "values": {0: Dim("rows"), 1: Dim("patches", max=c.n_patch)},
        "masked": {0: Dim("rows"), 1: Dim("patches", max=c.n_patch)},
        "padding": {0: Dim("rows"), 1: Dim("patches", max=c.n_patch)},
        "forecast_slots": {0: Dim("steps", max=c.context_length - 1)},
    }
    started = time.time()
    with torch.no_grad():
        program = torch.export.export(wrapper, (values, masked, padding, slots), dynamic_shapes=dynamic, strict=False)
    onnx_path = save_onnx(program, (values, masked, padding, slots), list(dynamic), ["quantiles"], folder, MODEL_NAME, started)
    check_onnx(model, onnx_path)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": c.context_length,
        "patch_size": c.d_patch,
        "min_forecast_length": min_forecast_length(c),
        "quantile_levels": [float(q) for q in c.quantile_levels],
        "point_output": "mean",
        "covariates": [],
        "exported_with": package_versions("torch", "onnx", "onnxscript", "granite-tsfm", "transformers"),
    })


def check_onnx(model: Any, path: Path) -> None:
    """The ONNX graph on trailing patches against the reference backbone's forward on the whole
    padded window, as forecast_single_step calls it, compared over the forecast slots."""
    import onnxruntime as ort

    c = model.config
    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(7)
    worst = 0.0
    for lengths, slots in (([40, 17, 3], 30), ([c.context_length - 30], 30), ([9], c.context_length - 9)):
        rows = len(lengths)
        window = np.zeros((rows, c.context_length), dtype=np.float32)
        pad = np.zeros((rows, c.context_length), dtype=bool)
        miss = np.zeros((rows, c.context_length), dtype=bool)
        pred = np.zeros((rows, c.context_length), dtype=bool)
        pred[:, -slots:] = True
        for r, n in enumerate(lengths):
            start = c.context_length - slots - n
            pad[r, :start] = True
            window[r, start:c.context_length - slots] = rng.randn(n) * 10 + 50
            miss[r, start + n // 2] = n > 4
        with torch.no_grad():
            out = model.backbone(inputs=torch.from_numpy(window), pred_mask=torch.from_numpy(pred), miss_mask=torch.from_numpy(miss),
                                 pad_mask=torch.from_numpy(pad), return_loss=False, context_length=c.context_length)
            expected = model.backbone.norm_fn.inverse_transform(out.quantile_outputs.permute(0, 2, 1))[:, :, -slots:].numpy()
        patches = -(-(max(lengths) + slots) // c.d_patch)
        keep = slice(c.context_length - patches * c.d_patch, None)
        masked = pad | miss | pred
        feeds = {
            "values": np.where(masked, 0, window)[:, keep].reshape(rows, patches, c.d_patch).astype(np.float32),
            "masked": masked[:, keep].reshape(rows, patches, c.d_patch),
            "padding": pad[:, keep].reshape(rows, patches, c.d_patch),
            "forecast_slots": np.zeros(slots, dtype=np.float32),
        }
        got = session.run(None, feeds)[0]
        worst = max(worst, float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max error relative to the largest output {worst:.2e}")


def reference_forecast(model: Any, histories: list[np.ndarray], horizon: int, batch_size: int | None = None) -> dict[str, np.ndarray]:
    """The reference's own forecast of a batch of series, on the CPU: `PatchTSTFMForPrediction`
    called with a list of series (NaN = missing) and `prediction_length`, as a user calls it.
    Returns {"mean": [n, horizon] (its prediction_outputs), "quantiles": [n, levels, horizon]}.
    `batch_size` series per call (default: all in one call)."""
    step = batch_size or max(1, len(histories))
    means, quantiles = [], []
    with torch.no_grad():
        for start in range(0, len(histories), step):
            batch = [torch.as_tensor(np.asarray(h, dtype=np.float32)) for h in histories[start:start + step]]
            out = model(past_values=batch, prediction_length=horizon, return_dict=True)
            means.extend(p[:, 0].numpy() for p in out.prediction_outputs)
            quantiles.extend(q[:, :, 0].numpy() for q in out.quantile_outputs)
    return {"mean": np.stack(means), "quantiles": np.stack(quantiles)}


def reference_cases() -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 4, 30, 90)]
    missing[0][10:15] = np.nan
    missing[1][:5] = np.nan
    missing[2][-3:] = np.nan
    missing[3][::4] = np.nan
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 2, 2)[0], series_bank(7, 1, 5, 5)[0], series_bank(8, 1, 11, 11)[0]]
    # With 32 slots, histories of 1, 17 and 33 values leave one value in a patch of 15 padding
    # steps: a patch masked as padding that holds a value.
    almost_padding = [series_bank(9, 1, n, n)[0] for n in (1, 17, 33)]
    long_history = series_bank(10, 2, 400, 600)
    bank = series_bank(seed=11, count=40, min_len=5, max_len=300)
    return [
        {"name": "basic", "horizon": 12, "series": basic, "levels": "all"},
        {"name": "missing_values", "horizon": 16, "series": missing},
        {"name": "short_histories", "horizon": 10, "series": short},
        {"name": "almost_padding_patch", "horizon": 20, "series": almost_padding},
        {"name": "long_history", "horizon": 20, "series": long_history},
        {"name": "long_horizon", "horizon": 200, "series": [basic[0], basic[2], long_history[0]]},
        {"name": "longest_horizon", "horizon": 255, "series": [basic[1], short[2]]},
        {"name": "batch_of_40", "horizon": 30, "series": bank},
    ]


def reference_check(model: Any, case: dict[str, Any]) -> dict[str, Any]:
    """A reference.json case recomputed by the reference (for the benchmark's identity check)."""
    histories = [np.array([np.nan if v is None else v for v in s["target"]], dtype=np.float32) for s in case["series"]]
    out = reference_forecast(model, histories, case["horizon"])
    levels = list(model.config.quantile_levels)
    picked = [levels.index(q) for q in case["levels"]]
    return {"mean": list(out["mean"]), "quantiles": [q[picked] for q in out["quantiles"]]}


def record_reference(model: Any, out_dir: Path, seed: int) -> Path:
    """Forecasts of the reference's PatchTSTFMForPrediction.forward (list input) for the fixed cases."""
    c = model.config
    cases = []
    for case in reference_cases():
        if case["horizon"] >= c.context_length:
            raise SystemExit(f"case {case['name']}: horizon {case['horizon']} is not below the context length {c.context_length}")
        levels = list(c.quantile_levels) if case.get("levels") == "all" else RECORDED_LEVELS
        recorded = {"name": case["name"], "horizon": case["horizon"], "levels": levels, "series": [{"target": to_json_array(s)} for s in case["series"]]}
        got = reference_check(model, recorded)
        crossing = min(float(np.min(np.diff(q, axis=0))) for q in got["quantiles"])
        if crossing < 0:
            raise SystemExit(f"case {case['name']}: the reference's quantiles cross ({crossing:.3g})")
        recorded["expected"] = {"mean": [to_json_array(m) for m in got["mean"]], "quantiles": [to_json_array(q) for q in got["quantiles"]]}
        cases.append(recorded)
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "tsfm_public.models.patchtst_fm.PatchTSTFMForPrediction.forward(past_values=[series...], prediction_length=horizon) (granite-tsfm 0.3.11)",
        "seed": seed,
        "min_forecast_length": min_forecast_length(c),
        "versions": package_versions("torch", "granite-tsfm", "transformers"),
        "cases": cases,
    })
