"""TimesFM 2.0 (google-research/timesfm 1.x, package `timesfm` 1.3, PyTorch backend) to ONNX.

`timesfm` 1.3 and `timesfm` 3.x (TimesFM 2.5) are one package name: this family runs in an
environment of its own (tools/export/README.md, requirements-timesfm2.txt).

What the ONNX graph holds: `PatchedTimeSeriesDecoder.forward` of the reference, normalisation by
the first patch with at least three observed values included, returning the last patch's output
only, which is all the reference's decode reads. What the service's adapter
(models/families/foundation/timesfm2.ts) does, as `TimesFmTorch.forecast` and the decoder's `decode` do:
leading-NaN strip and linear interpolation, the cut or left padding to the context length, the
frequency class, the autoregressive roll-out that appends the mean of each output patch, and the
point forecast (the median, `point_forecast_mode="median"`).

Graph contract:
  input_ts       [rows, context_length] float32  padded values 0
  input_padding  [rows, context_length] float32  1 = padding
  freq           [rows, 1] int64                 0 high (up to daily), 1 medium (weekly to quarterly), 2 low
  -> outputs     [rows, output_patch_len, 1 + quantiles]  channel 0 the mean, then the quantile levels
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ensure_dir, numeric_xreg_cases, package_versions, randomize_, series_bank, to_json_array, write_manifest, save_onnx, write_reference

MODEL_NAME = "timesfm-2"
QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


class OnnxForward(torch.nn.Module):
    """The reference forward, the last patch's outputs only (decode reads nothing else)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ts: torch.Tensor, input_padding: torch.Tensor, freq: torch.Tensor) -> torch.Tensor:
        return self.model(input_ts, input_padding, freq)[:, -1]


def hparams(context_len: int, horizon_len: int, tiny: bool, batch: int = 32) -> Any:
    from timesfm import TimesFmHparams

    if tiny:
        return TimesFmHparams(context_len=context_len, horizon_len=horizon_len, input_patch_len=8, output_patch_len=16, num_layers=2, num_heads=4, model_dims=32,
                              per_core_batch_size=batch, use_positional_embedding=False, quantiles=QUANTILES, point_forecast_mode="median")
    # google/timesfm-2.0-500m-pytorch
    return TimesFmHparams(context_len=context_len, horizon_len=horizon_len, input_patch_len=32, output_patch_len=128, num_layers=50, num_heads=16, model_dims=1280,
                          per_core_batch_size=batch, use_positional_embedding=False, quantiles=QUANTILES, point_forecast_mode="median")


def api_for(model: Any, hp: Any) -> Any:
    """The reference's forecast API around an already built decoder (it would download otherwise)."""
    from timesfm import TimesFmCheckpoint
    from timesfm.timesfm_torch import TimesFmTorch

    class Loaded(TimesFmTorch):
        def load_from_checkpoint(self, checkpoint: Any) -> None:
            self._model = model

    return Loaded(hparams=hp, checkpoint=TimesFmCheckpoint())


def decoder(hp: Any) -> Any:
    from timesfm import pytorch_patched_decoder as ppd

    config = ppd.TimesFMConfig(num_layers=hp.num_layers, num_heads=hp.num_heads, num_kv_heads=hp.num_heads, hidden_size=hp.model_dims, intermediate_size=hp.model_dims, patch_len=hp.input_patch_len,
                               horizon_len=hp.output_patch_len, head_dim=hp.model_dims // hp.num_heads, quantiles=hp.quantiles, use_positional_embedding=hp.use_positional_embedding)
    return ppd.PatchedTimeSeriesDecoder(config).eval()


def tiny_model(seed: int) -> Any:
    model = decoder(hparams(64, 16, tiny=True))
    randomize_(model, seed)
    return model


def base_size_model(seed: int) -> Any:
    model = decoder(hparams(512, 128, tiny=False))
    randomize_(model, seed)
    return model


def load_checkpoint(path: str) -> Any:
    """torch_model.ckpt of google/timesfm-2.0-500m-pytorch, or its folder."""
    file = Path(path)
    if file.is_dir():
        file = file / "torch_model.ckpt"
    model = decoder(hparams(2048, 128, tiny=False))
    model.load_state_dict(torch.load(str(file), weights_only=True))
    return model.eval()


def export(model: Any, out_dir: Path, version: str, source: str, max_context: int) -> Path:
    from torch.export import Dim

    c = model.config
    if max_context % c.patch_len != 0:
        raise SystemExit(f"--max-context must be a multiple of the patch length {c.patch_len}")
    folder = ensure_dir(out_dir / MODEL_NAME)
    wrapper = OnnxForward(model).eval()
    rows = 3
    input_ts = torch.randn(rows, max_context)
    padding = torch.zeros(rows, max_context)
    padding[0, : max_context // 2] = 1.0
    freq = torch.zeros(rows, 1, dtype=torch.long)
    dynamic = {"input_ts": {0: Dim("rows")}, "input_padding": {0: Dim("rows")}, "freq": {0: Dim("rows")}}
    started = time.time()
    with torch.no_grad():
        program = torch.export.export(wrapper, (input_ts, padding, freq), dynamic_shapes=dynamic, strict=False)
    onnx_path = save_onnx(program, (input_ts, padding, freq), list(dynamic), ["outputs"], folder, MODEL_NAME, started)
    check_onnx(wrapper, onnx_path, max_context)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": max_context,
        "patch_size": c.patch_len,
        "output_patch_len": c.horizon_len,
        "quantile_levels": list(c.quantiles),
        "point_output": "median",
        "covariates": [],
        "exported_with": package_versions("torch", "onnx", "onnxscript", "timesfm"),
    })


def check_onnx(wrapper: OnnxForward, path: Path, context: int) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(7)
    worst = 0.0
    for rows in (1, 5):
        input_ts = (rng.randn(rows, context) * 10 + 50).astype(np.float32)
        padding = np.zeros((rows, context), dtype=np.float32)
        padding[0, : context // 3] = 1.0
        input_ts[padding == 1] = 0.0
        freq = rng.randint(0, 3, size=(rows, 1)).astype(np.int64)
        with torch.no_grad():
            expected = wrapper(torch.from_numpy(input_ts), torch.from_numpy(padding), torch.from_numpy(freq)).numpy()
        got = session.run(None, {"input_ts": input_ts, "input_padding": padding, "freq": freq})[0]
        worst = max(worst, float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max error relative to the largest output {worst:.2e}")


def reference_cases() -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 3, 30, 60)]
    missing[0][10:15] = np.nan
    missing[1][:5] = np.nan
    missing[2][-3:] = np.nan
    short = [series_bank(5, 1, 2, 2)[0], series_bank(6, 1, 5, 5)[0], series_bank(7, 1, 11, 11)[0]]
    bank = series_bank(seed=11, count=30, min_len=5, max_len=120)
    return [
        {"name": "basic", "horizon": 12, "freq": [0, 1, 2], "series": basic},
        {"name": "missing_values", "horizon": 8, "freq": [0, 0, 0], "series": missing},
        {"name": "short_histories", "horizon": 10, "freq": [0, 1, 0], "series": short},
        {"name": "long_horizon", "horizon": 45, "freq": [0, 1], "series": basic[1:]},
        {"name": "batch_of_30", "horizon": 16, "freq": [k % 3 for k in range(30)], "series": bank},
    ]


def xreg_cases() -> list[dict[str, Any]]:
    """Series with known-future numeric covariates (over the history and the horizon)."""
    out = numeric_xreg_cases(np.random.RandomState(12))
    for case in out:
        case["freq"] = [0] * len(case["series"])
    return out


def record_xreg_cases(model: Any, max_context: int, tiny: bool) -> list[dict[str, Any]]:
    """`forecast_with_covariates` with the reference's defaults: xreg_mode "xreg + timesfm", targets
    normalised per input, ridge 0. It returns point forecasts only (no quantiles)."""
    cases = []
    for case in xreg_cases():
        h = case["horizon"]
        api = api_for(model, hparams(max_context, h, tiny=tiny, batch=len(case["series"])))
        names = sorted(case["series"][0]["future"])
        point, _ = api.forecast_with_covariates(
            inputs=[s["target"] for s in case["series"]],
            dynamic_numerical_covariates={k: [s["future"][k] for s in case["series"]] for k in names},
            freq=case["freq"],
        )
        cases.append({
            "name": case["name"],
            "horizon": h,
            "freq": case["freq"],
            "xreg": {"mode": "xreg + timesfm", "normalize_xreg_target_per_input": True, "ridge": 0.0},
            "series": [{"target": to_json_array(s["target"]), "future": {k: to_json_array(v) for k, v in s["future"].items()}} for s in case["series"]],
            "expected": {"point": [to_json_array(np.asarray(p)) for p in point]},
        })
    return cases


def record_reference(model: Any, out_dir: Path, seed: int, max_context: int) -> Path:
    """Forecasts of the reference `TimesFmTorch.forecast` (and `forecast_with_covariates`) for the fixed cases."""
    c = model.config
    tiny = c.hidden_size < 1280
    cases = []
    for case in reference_cases():
        h = case["horizon"]
        api = api_for(model, hparams(max_context, h, tiny=tiny, batch=len(case["series"])))
        point, full = api.forecast([np.array(s, dtype=np.float32) for s in case["series"]], freq=case["freq"])
        cases.append({
            "name": case["name"],
            "horizon": h,
            "freq": case["freq"],
            "series": [{"target": to_json_array(s)} for s in case["series"]],
            "expected": {
                "point": [to_json_array(p) for p in point],
                # [series][channel][step]: channel 0 the mean, 1..9 the levels 0.1..0.9
                "quantiles": [to_json_array(np.asarray(q).T) for q in full],
            },
        })
    cases.extend(record_xreg_cases(model, max_context, tiny))
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "timesfm.TimesFmTorch.forecast (timesfm 1.3, PyTorch); forecast_with_covariates for the xreg cases",
        "seed": seed,
        "max_context": max_context,
        "versions": package_versions("torch", "timesfm"),
        "cases": cases,
    })
