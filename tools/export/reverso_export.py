"""Reverso (the paper's reference code, github.com/shinfxh/reverso at commit 6904526) to ONNX.

(Named reverso_export, not reverso: the reference's package is `reverso`, which this folder,
first on sys.path, would shadow.)

Not on PyPI: the reference is installed from its repository snapshot into a virtualenv of its own
(tools/export/README.md, requirements-reverso.txt), with its source tree kept beside it
(REVERSO_SOURCE, default `src/` in the running environment's folder) for its
forecasting pipeline, `ReversoPredictor` of example/eval_gift.py, which is not in the package.

The reference needs an NVIDIA GPU: FlashFFTConv (a CUDA extension) for its long convolutions and
flash-linear-attention's triton kernels inside DeltaNet. tools/export/reverso_kernels.py replaces
exactly those kernels with the packages' own plain-torch references (the FFT convolution of
flash-fft-conv's tests, fla's naive delta-rule recurrence, its rms_norm_ref, the short causal
convolution as the nn.Conv1d it is) and runs the CNNBlock in float32 rather than in the bfloat16
that FlashFFTConv requires (reverso_kernels.py says why); everything else is the reference's code.

The pipeline (`ReversoPredictor.predict`, what the paper's GIFT-Eval results ran): each series,
subsampled by `downsample_factor` (every k-th value from the first, a setting per dataset in the
reference's config/downsample_factors.json, 1 elsewhere), its last `seq_len` values, left-padded
to `seq_len` with its first value; missing values linearly interpolated (np.interp, flat beyond
the ends; one observed value fills all, none gives zeros); the network forecasts 48 steps
(`output_token_len`) from the last `seq_len` values (min-max normalised inside), rolled out
autoregressively; with `force_flip_invariance` (the README's recommended evaluation) the forecast
is (f(x) - f(-x)) / 2; a subsampled forecast of `horizon // k` steps is interpolated back to
`horizon` steps. The forecast is a point: the reference's SampleForecast repeats it as every sample.

What the ONNX graph holds: `Model.forward` (min-max normalisation, embedding, the conv/DeltaNet/MLP
stack, the attention decoder head, the inverse normalisation), in the kernels' export forms (a
direct circular convolution, fla's naive recurrence as an ONNX Loop). What the adapter (models/families/foundation/reverso.ts) does:
the rest of the pipeline above.

Graph contract:
  context   [rows, seq_len] float32   prepared windows (no missing values)
  -> forecast [rows, output_token_len] float32
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

import reverso_kernels
from common import ensure_dir, package_versions, randomize_, series_bank, to_json_array, write_manifest, write_reference
from reverso_graph import export_graph

MODEL_NAME = "reverso"
REFERENCE_COMMIT = "6904526c172726dff1e0d3cf8a28f554d8846efd"
REFERENCE_SOURCE = Path(os.environ.get("REVERSO_SOURCE", Path(sys.prefix) / "src"))
# The forecast options the manifest records (forecast_config): the README's evaluation command
# uses --force-flip-invariance; downsampling is per dataset in the reference (1 but for bizitobs_l2c).
DEFAULT_FLIP_INVARIANCE = True
DEFAULT_DOWNSAMPLE_FACTOR = 1


def reference_module() -> Any:
    """`reverso.model` with the kernel stand-ins in place (imported once)."""
    reverso_kernels.install()
    import reverso.model

    reverso_kernels.install_float32(reverso.model)
    return reverso.model


def config(**overrides: Any) -> SimpleNamespace:
    """checkpoints/reverso_small/args.json's fields (the released layout), with overrides."""
    base = dict(seq_len=2048, input_token_len=2048, output_token_len=48, e_layers=4, d_model=64, d_intermediate=256, output_bottleneck_dim=48,
                expand_v=1.0, state_weaving=1, gating_kernel_size=3, main_module="conv,attn,conv,attn", use_norm=True, learn_bias=1)
    return SimpleNamespace(**{**base, **overrides})


def build(cfg: SimpleNamespace, seed: int) -> Any:
    torch.manual_seed(seed)
    model = reference_module().Model(cfg).eval()
    model.reverso_config = cfg
    return model


def tiny_model(seed: int) -> Any:
    """Reverso's own classes at the smallest size its kernels allow: seq_len 256 (FlashFFTConv's
    smallest FFT size), d_model 32 (4 DeltaNet heads of 8), d_intermediate 64, the released
    conv,attn,conv,attn layout (the inner attention layer does the state weaving), 48-step output."""
    model = build(config(seq_len=256, input_token_len=256, d_model=32, d_intermediate=64), seed)
    randomize_(model, seed)
    with torch.no_grad():
        for layer in model.layers:
            if hasattr(layer, "k"):  # the long kernels: decaying, as a trained filter's, and O(1) in sum
                layer.k.mul_(torch.exp(-torch.arange(layer.k.shape[-1]) / 32.0) * 4.0)
        # The head's output is in the window's min-max scale: near the middle of [0, 1], as a
        # trained model's forecasts stay near the context's range. Random, it ranges over several
        # units, and each roll-out call widens the next window's range: the forecasts grow
        # geometrically and the roll-out magnifies float32 rounding (1e-2 after 150 steps).
        model.out_proj.weight.mul_(0.1)
        model.out_proj.bias.fill_(0.5)
    return model


def base_size_model(seed: int) -> Any:
    """Reverso-Small, the released checkpoint's configuration (checkpoints/reverso_small/args.json:
    seq_len 2048, d_model 64, conv,attn,conv,attn, d_intermediate 256), with random weights: its
    compute, for speed measurements only."""
    return build(config(), seed)


def load_checkpoint(path: str) -> Any:
    """A local folder (or checkpoint.pth) of the reference's checkpoints/<name>/: checkpoint.pth
    and args.json, as the reference's load_model reads them. The reference's load_checkpoint key
    handling (wrapping dicts, the DDP "module." prefix); FlashFFTConv's constant DFT tables (its
    buffers, not learned) are left out: the stand-in computes its transforms itself."""
    folder = Path(path) if Path(path).is_dir() else Path(path).parent
    cfg = SimpleNamespace(**json.loads((folder / "args.json").read_text()))
    model = build(cfg, 0)
    raw = torch.load(folder / "checkpoint.pth", map_location="cpu", weights_only=False)
    state = raw
    if isinstance(raw, dict):
        for key in ("model_state_dict", "state_dict", "model", "ema", "ema_state_dict"):
            if key in raw and isinstance(raw[key], dict):
                state = raw[key]
                break
    state = {k.removeprefix("module."): v for k, v in state.items() if "flashfftconv." not in k}
    model.load_state_dict(state, strict=True)
    return model.eval()


def export(model: Any, out_dir: Path, version: str, source: str) -> Path:
    cfg = model.reverso_config
    if cfg.input_token_len != cfg.seq_len:
        raise SystemExit(f"input_token_len {cfg.input_token_len} must equal seq_len {cfg.seq_len} (the head reads the whole window)")
    folder = ensure_dir(out_dir / MODEL_NAME)
    started = time.time()
    export_graph(model, cfg.seq_len, folder)
    print(f"exported {MODEL_NAME} in {time.time() - started:.0f} s")
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": cfg.seq_len,
        "patch_size": 1,
        "output_patch_size": cfg.output_token_len,
        "quantile_levels": [0.5],
        "point_output": "median",
        "covariates": [],
        "forecast_config": {"flip_invariance": DEFAULT_FLIP_INVARIANCE, "downsample_factor": DEFAULT_DOWNSAMPLE_FACTOR},
        "exported_with": {**package_versions("torch", "onnx", "fla-core", "flash-linear-attention", "gluonts"), "reverso": REFERENCE_COMMIT},
    })


def predictor_class() -> Any:
    """`ReversoPredictor` of the reference's example/eval_gift.py (its pipeline; not in the package)."""
    import importlib.util

    reference_module()
    path = REFERENCE_SOURCE / "example" / "eval_gift.py"
    if not path.is_file():
        raise SystemExit(f"the reference's pipeline {path} is missing: extract the repository snapshot there (tools/export/README.md) or set REVERSO_SOURCE")
    spec = importlib.util.spec_from_file_location("reverso_eval_gift", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ReversoPredictor


def reference_forecast(model: Any, histories: list[np.ndarray], horizon: int, flip_invariance: bool = DEFAULT_FLIP_INVARIANCE,
                       downsample_factor: int = DEFAULT_DOWNSAMPLE_FACTOR, batch_size: int = 256) -> np.ndarray:
    """The reference's own forecast of a batch of series on the CPU: `ReversoPredictor.predict`
    (example/eval_gift.py) on GluonTS-style entries, with `model` as its network. NaN = missing.
    Returns [n, horizon], the point forecast (every sample of its SampleForecast)."""
    import pandas as pd

    cfg = model.reverso_config
    predictor = predictor_class()(
        prediction_length=horizon, checkpoint_path=None, device="cpu", seq_len=cfg.seq_len, input_token_len=cfg.input_token_len,
        output_token_len=cfg.output_token_len, d_model=cfg.d_model, d_intermediate=cfg.d_intermediate, output_bottleneck_dim=cfg.output_bottleneck_dim,
        expand_v=cfg.expand_v, state_weaving=cfg.state_weaving, gating_kernel_size=cfg.gating_kernel_size, main_module=cfg.main_module,
        num_samples=1, batch_size=batch_size, downsample_factor=downsample_factor, force_flip_invariance=flip_invariance,
    )
    predictor.model = model
    start = pd.Period("2024-01-01", freq="D")
    entries = [{"target": np.asarray(h, dtype=np.float32), "start": start} for h in histories]
    return np.stack([f.samples[0] for f in predictor.predict(entries)])


def reference_cases() -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 300, 300)[0], series_bank(2, 1, 256, 256)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 6, 60, 300)]
    missing[0][10:25] = np.nan
    missing[1][:7] = np.nan  # the first value missing: the left padding is NaN too, then interpolated
    missing[2][-4:] = np.nan
    missing[3][::3] = np.nan
    missing[4][:] = np.nan
    missing[4][20] = 42.0  # one observed value: filled everywhere
    missing[5][:] = np.nan  # none: zeros
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 2, 2)[0], series_bank(7, 1, 5, 5)[0], series_bank(8, 1, 30, 30)[0]]
    long_history = series_bank(10, 2, 700, 900)
    bank = series_bank(seed=11, count=40, min_len=5, max_len=400)
    return [
        {"name": "basic", "horizon": 24, "series": basic},
        {"name": "missing_values", "horizon": 30, "series": missing},
        {"name": "short_histories", "horizon": 48, "series": short},
        {"name": "long_horizon", "horizon": 150, "series": [basic[0], basic[2], short[2]]},
        {"name": "no_flip_invariance", "horizon": 60, "series": basic, "flip_invariance": False},
        {"name": "downsampled", "horizon": 100, "series": long_history + [basic[0]], "downsample_factor": 3},
        {"name": "downsampled_long_horizon", "horizon": 250, "series": long_history, "downsample_factor": 2},
        {"name": "batch_of_40", "horizon": 36, "series": bank},
    ]


def reference_check(model: Any, case: dict[str, Any]) -> list[np.ndarray]:
    """A reference.json case recomputed by the reference (for the benchmark's identity check)."""
    histories = [np.array([np.nan if v is None else v for v in s["target"]], dtype=np.float32) for s in case["series"]]
    return list(reference_forecast(model, histories, case["horizon"], case["flip_invariance"], case["downsample_factor"]))


def record_reference(model: Any, out_dir: Path, seed: int) -> Path:
    """Forecasts of the reference pipeline (ReversoPredictor.predict) for the fixed cases."""
    cases = []
    for case in reference_cases():
        recorded = {
            "name": case["name"],
            "horizon": case["horizon"],
            "flip_invariance": case.get("flip_invariance", DEFAULT_FLIP_INVARIANCE),
            "downsample_factor": case.get("downsample_factor", DEFAULT_DOWNSAMPLE_FACTOR),
            "series": [{"target": to_json_array(s)} for s in case["series"]],
        }
        recorded["expected"] = [to_json_array(f) for f in reference_check(model, recorded)]
        cases.append(recorded)
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": f"ReversoPredictor.predict of example/eval_gift.py (github.com/shinfxh/reverso {REFERENCE_COMMIT}), kernels as tools/export/reverso_kernels.py",
        "seed": seed,
        "cases": cases,
    })


if __name__ == "__main__":
    sys.exit("run tools/export/export.py reverso ...")
