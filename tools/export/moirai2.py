"""Moirai 2.0 (SalesforceAIResearch/uni2ts, package `uni2ts` 2.0.0) to ONNX.

What the ONNX graph holds: `Moirai2Module.forward(..., training_mode=False)` of the reference
(the packed standard scaler, in float64 as the reference computes it, the residual input
projection, the causal decoder with its binary variate bias and rotary time projection, the
quantile head and the inverse scaling), the head applied at the tokens the decode reads. What the
service's adapter (models/families/foundation/moirai2.ts) does, as `Moirai2Forecast.create_predictor`'s
gluonts pipeline does: causal-mean imputation of missing targets, the instance splitter's
context cut and zero padding, `_convert`'s patching and ids (sample, time, variate, prediction
mask; covariates as extra variates), and `Moirai2Forecast.forward`'s recursive multi-quantile
roll-out past `num_predict_token` patches (every quantile path fed back, then the quantiles of
the Q * Q values taken with torch.quantile's linear rule).

Graph contract:
  target           [rows, tokens, patch]  float32  the packed sequence (all variates)
  observed_mask    [rows, tokens, patch]  bool
  sample_id        [rows, tokens]         int64    0 = padding token
  time_id          [rows, tokens]         int64
  variate_id       [rows, tokens]         int64
  prediction_mask  [rows, tokens]         bool     true = a token to forecast
  read_tokens      [reads]                int64    token positions whose head is returned
  -> preds         [rows, reads, num_predict_token * Q * patch]  in the series' scale
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ONNX_FILE, clean_onnx, ensure_dir, package_versions, priced_series, randomize_, series_bank, to_json_array, write_manifest, write_reference

MODEL_NAME = "moirai-2"
# torch 2.4's TorchScript exporter (uni2ts 2.0.0 pins torch < 2.5); onnxruntime-node loads it.
OPSET = 17
INPUTS = ["target", "observed_mask", "sample_id", "time_id", "variate_id", "prediction_mask", "read_tokens"]
# The gluonts predictor's batch size in the records (results do not depend on it).
BATCH_SIZE = 32


class OnnxForward(torch.nn.Module):
    """`Moirai2Module.forward(training_mode=False)`, its head applied to `read_tokens` only.

    The head and the inverse scaling act on each token alone, and the decode reads one token per
    variate (`Moirai2Forecast.forward`'s pred_index), so the rest is skipped; check_onnx compares
    with the full forward.
    """

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module

    def forward(self, target, observed_mask, sample_id, time_id, variate_id, prediction_mask, read_tokens):  # type: ignore[no-untyped-def]
        from uni2ts.common.torch_util import packed_causal_attention_mask

        m = self.module
        loc, scale = m.scaler(target, observed_mask * ~prediction_mask.unsqueeze(-1), sample_id, variate_id)
        scaled = (target - loc) / scale
        reprs = m.in_proj(torch.cat([scaled, observed_mask.to(torch.float32)], dim=-1))
        reprs = m.encoder(reprs, packed_causal_attention_mask(sample_id, time_id), time_id=time_id, var_id=variate_id)
        preds = m.out_proj(reprs.index_select(1, read_tokens))
        return preds * scale.index_select(1, read_tokens) + loc.index_select(1, read_tokens)


def sized_model(d_model: int, d_ff: int, num_layers: int, patch_size: int, max_seq_len: int, num_predict_token: int) -> Any:
    from uni2ts.model.moirai2 import Moirai2Module

    return Moirai2Module(
        d_model=d_model, d_ff=d_ff, num_layers=num_layers, patch_size=patch_size, max_seq_len=max_seq_len,
        attn_dropout_p=0.0, dropout_p=0.0, scaling=True, num_predict_token=num_predict_token,
    ).eval()


def tiny_model(seed: int) -> Any:
    """A tiny Moirai 2.0 built by the reference's own class, with fixed random weights. d_model 64
    is the smallest the reference allows (it has d_model // 64 heads)."""
    module = sized_model(d_model=64, d_ff=64, num_layers=2, patch_size=8, max_seq_len=64, num_predict_token=2)
    randomize_(module, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 1 and "norm" in name:  # RMSNorm scales (norm1.weight...): around 1
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
        # A trained model's quantiles do not cross; random weights' would. Every level gets the same
        # random map plus a small random part, and the output bias a level-ordered offset.
        q, p_len = module.num_quantiles, module.patch_size
        for layer in (module.out_proj.output_layer, module.out_proj.residual_layer):
            w = layer.weight.view(module.num_predict_token, q, p_len, -1)
            w.copy_(w[:, :1] + 0.1 * w)
        bias = module.out_proj.output_layer.bias.view(module.num_predict_token, q, p_len)
        bias.copy_(bias[:, :1] * 0.5 + 0.25 * (torch.arange(q, dtype=torch.float32) - q // 2).view(1, q, 1))
    return module


def base_size_model(seed: int) -> Any:
    """Moirai 2.0 small's size (uni2ts's moirai-2.0-R-small: d_model 384, 6 layers, patch 16, 4
    predicted patches) with random weights, for speed measurements only."""
    module = sized_model(d_model=384, d_ff=1024, num_layers=6, patch_size=16, max_seq_len=512, num_predict_token=4)
    randomize_(module, seed)
    return module


def load_checkpoint(path: str) -> Any:
    """A local snapshot of Salesforce/moirai-2.0-R-small (config.json, model.safetensors)."""
    from uni2ts.model.moirai2 import Moirai2Module

    return Moirai2Module.from_pretrained(path).eval()


def example_inputs(module: Any, rows: int, tokens: int, rng: np.random.RandomState) -> dict[str, np.ndarray]:
    """A packed sequence with padding tokens, missing values, two variates and forecast tokens."""
    p = module.patch_size
    target = rng.randn(rows, tokens, p).astype(np.float32) * 3 + 10
    observed = rng.rand(rows, tokens, p) > 0.1
    sample_id = np.ones((rows, tokens), dtype=np.int64)
    sample_id[0, :2] = 0
    half = tokens // 2
    variate_id = np.zeros((rows, tokens), dtype=np.int64)
    variate_id[:, half:] = 1
    time_id = np.concatenate([np.arange(half), np.arange(tokens - half)])[None].repeat(rows, 0).astype(np.int64)
    prediction_mask = np.zeros((rows, tokens), dtype=bool)
    prediction_mask[:, half - 1] = True
    read = np.array([half - 2, tokens - 1], dtype=np.int64)
    return {"target": target, "observed_mask": observed, "sample_id": sample_id, "time_id": time_id, "variate_id": variate_id, "prediction_mask": prediction_mask, "read_tokens": read}


def register_export_rules() -> None:
    """Rules torch 2.4's TorchScript exporter lacks or gets wrong for uni2ts's code:

    - `Tensor.mT` (packed_attention_mask) has no rule: it is a Transpose of the last two axes.
    - its `scaled_dot_product_attention` rule fails on an explicit float `scale` (the attention's
      softmax_scale): softmax(q k^T * scale + mask) v, written out in ONNX ops (the mask here is
      the float bias with -inf where attention is masked; a boolean mask becomes 0 / -inf).
    - its `index_put` rule broadcasts a boolean mask of fewer axes than the tensor from the left
      (PackedStdScaler's `loc[sample_id == 0] = 0` on [rows, tokens, 1]), which is wrong: the mask
      is given the tensor's trailing axes, then Where.
    """
    from torch.onnx import symbolic_opset11
    from torch.onnx import symbolic_helper as sh

    def last_two_swapped(g: Any, x: Any) -> Any:
        rank = sh._get_tensor_rank(x)
        return g.op("Transpose", x, perm_i=[*range(rank - 2), rank - 1, rank - 2])

    def attention(g: Any, query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: Any, is_causal: Any, scale: Any = None) -> Any:
        if sh._maybe_get_const(is_causal, "b") or float(sh._maybe_get_const(dropout_p, "f")) != 0.0:
            raise RuntimeError("only the non-causal attention without dropout of inference is exported")
        if scale is None or sh._is_none(scale):
            factor = 1.0 / float(sh._get_tensor_sizes(query)[-1]) ** 0.5
        else:
            factor = float(sh._maybe_get_const(scale, "f"))
        scores = g.op("MatMul", query, last_two_swapped(g, key))
        scores = g.op("Mul", scores, g.op("Constant", value_t=torch.tensor(factor, dtype=torch.float32)))
        if not sh._is_none(attn_mask):
            if sh._type_utils.JitScalarType.from_value(attn_mask) == sh._type_utils.JitScalarType.BOOL:
                zero = g.op("Constant", value_t=torch.tensor(0.0))
                minus_inf = g.op("Constant", value_t=torch.tensor(-float("inf")))
                attn_mask = g.op("Where", attn_mask, zero, minus_inf)
            scores = g.op("Add", scores, attn_mask)
        return g.op("MatMul", g.op("Softmax", scores, axis_i=-1), value)

    def index_put(g: Any, x: Any, indices: Any, values: Any, accumulate: Any = False) -> Any:
        index = sh._unpack_list(indices)
        is_mask = len(index) == 1 and sh._type_utils.JitScalarType.from_value(index[0]) == sh._type_utils.JitScalarType.BOOL
        if not is_mask or sh._maybe_get_const(accumulate, "b"):
            return symbolic_opset11.index_put(g, x, indices, values, accumulate)
        mask, mask_rank, rank = index[0], sh._get_tensor_rank(index[0]), sh._get_tensor_rank(x)
        if mask_rank < rank:
            axes = g.op("Constant", value_t=torch.tensor(list(range(mask_rank, rank)), dtype=torch.int64))
            mask = g.op("Unsqueeze", mask, axes)
        return g.op("Where", mask, g.op("CastLike", values, x), x)

    torch.onnx.register_custom_op_symbolic("aten::mT", last_two_swapped, OPSET)
    torch.onnx.register_custom_op_symbolic("aten::index_put", index_put, OPSET)
    torch.onnx.register_custom_op_symbolic("aten::scaled_dot_product_attention", attention, OPSET)


def export_graph(wrapper: torch.nn.Module, module: Any, folder: Path, output: str, name: str) -> None:
    """Traces `wrapper` on example inputs of `module` into folder/ONNX_FILE, with the packed
    inputs' rows and tokens, the read tokens and the output's rows and reads dynamic (the
    TorchScript exporter of torch 2.4, with our export rules); shared by moirai-2 and moirai-moe."""
    example = example_inputs(module, 3, 6, np.random.RandomState(3))
    dynamic = {k: {0: "rows", 1: "tokens"} for k in INPUTS[:-1]}
    dynamic["read_tokens"] = {0: "reads"}
    dynamic[output] = {0: "rows", 1: "reads"}
    started = time.time()
    register_export_rules()
    raw = folder / "model.raw.onnx"
    with torch.no_grad():
        torch.onnx.export(
            wrapper, tuple(torch.from_numpy(example[k]) for k in INPUTS), str(raw),
            input_names=INPUTS, output_names=[output], dynamic_axes=dynamic, opset_version=OPSET,
        )
    clean_onnx(raw, folder / ONNX_FILE)
    raw.unlink()
    print(f"exported {name} in {time.time() - started:.0f} s")


def export(module: Any, out_dir: Path, version: str, source: str, max_context: int) -> Path:
    if max_context % module.patch_size != 0:
        raise SystemExit(f"--max-context must be a multiple of the patch size {module.patch_size}")
    folder = ensure_dir(out_dir / MODEL_NAME)
    wrapper = OnnxForward(module).eval()
    export_graph(wrapper, module, folder, "preds", MODEL_NAME)
    check_onnx(wrapper, folder / ONNX_FILE)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": max_context,
        "patch_size": module.patch_size,
        "num_predict_token": module.num_predict_token,
        # RotaryProjection's table: time ids (context and forecast patches) stay below it.
        "max_time_tokens": module.max_seq_len,
        "quantile_levels": [float(q) for q in module.quantile_levels],
        "point_output": "median",
        "covariates": ["historical", "future"],
        "exported_with": package_versions("torch", "onnx", "onnxruntime", "uni2ts", "gluonts"),
    })


def check_onnx(wrapper: OnnxForward, path: Path) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(7)
    worst = 0.0
    for rows, tokens in [(1, 2), (5, 9), (2, 30)]:
        feeds = example_inputs(wrapper.module, rows, tokens, rng)
        with torch.no_grad():
            t = {k: torch.from_numpy(v) for k, v in feeds.items()}
            full = wrapper.module(t["target"], t["observed_mask"], t["sample_id"], t["time_id"], t["variate_id"], t["prediction_mask"], training_mode=False)
            expected = full[:, feeds["read_tokens"]].numpy()
        (got,) = session.run(None, feeds)
        worst = max(worst, float(np.max(np.abs(got - expected)) / np.max(np.abs(expected))))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max error relative to the largest output {worst:.2e}")


def forecaster(module: Any, horizon: int, context_length: int, future_dims: int = 0, past_dims: int = 0) -> Any:
    from uni2ts.model.moirai2 import Moirai2Forecast

    return Moirai2Forecast(
        module=module, prediction_length=horizon, context_length=context_length, target_dim=1,
        feat_dynamic_real_dim=future_dims, past_feat_dynamic_real_dim=past_dims,
    )


def reference_forecast(model: Any, histories: list[np.ndarray], horizon: int, context_length: int = 1680, batch_size: int = BATCH_SIZE,
                       future: list[np.ndarray] | None = None, past: list[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The reference pipeline on CPU, batched: `Moirai2Forecast.create_predictor(batch_size)`
    on a gluonts dataset, as uni2ts's README runs Moirai 2.0. `model` is a Moirai2Module;
    `future[i]` [k, n_i + horizon] and `past[i]` [k', n_i] are optional covariates. Returns the
    point forecasts [series, horizon] (QuantileForecast.mean, i.e. its 0.5 quantile) and the
    quantiles [series, Q, horizon] at the module's quantile levels."""
    import pandas as pd

    k_future = 0 if future is None else future[0].shape[0]
    k_past = 0 if past is None else past[0].shape[0]
    predictor = forecaster(model, horizon, context_length, k_future, k_past).create_predictor(batch_size=batch_size, device="cpu")
    dataset = []
    for i, h in enumerate(histories):
        entry: dict[str, Any] = {"start": pd.Period("2024-01-01 00:00", freq="h"), "target": np.asarray(h, dtype=np.float32)}
        if future is not None:
            entry["feat_dynamic_real"] = np.asarray(future[i], dtype=np.float32)
        if past is not None:
            entry["past_feat_dynamic_real"] = np.asarray(past[i], dtype=np.float32)
        dataset.append(entry)
    with torch.no_grad():
        forecasts = list(predictor.predict(dataset))
    return np.stack([f.mean for f in forecasts]), np.stack([f.forecast_array for f in forecasts])


def covariate_cases(rng: np.random.RandomState) -> list[dict[str, Any]]:
    """Targets driven by a known-future price and promotion flag and a past-only load."""
    out = []
    for name, horizon, lengths, kinds in (
        ("covariates", 12, (50, 64, 100), ("future", "past")),
        ("covariates_long_horizon", 40, (30, 80), ("future", "past")),
        ("future_covariates_only", 20, (40, 70), ("future",)),
        ("past_covariates_only", 12, (45, 90), ("past",)),
    ):
        series = []
        for n in lengths:
            target, price, promo = priced_series(rng, n, horizon)
            load = (target * 0.3 + rng.normal(0, 2, n)).astype(np.float32)
            load[n // 3] = np.nan  # a missing covariate value: 0, marked unobserved, as gluonts fills it
            entry: dict[str, Any] = {"target": target}
            if "future" in kinds:
                entry["future"] = {"price": price, "promo": promo}
            if "past" in kinds:
                entry["past"] = {"load": load}
            series.append(entry)
        out.append({"name": name, "horizon": horizon, "series": series})
    return out


def reference_cases() -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 5, 30, 60)]
    missing[0][10:15] = np.nan
    missing[1][:12] = np.nan  # whole leading patches missing: their time ids stay 0
    missing[2][-3:] = np.nan
    missing[3][:] = np.nan
    missing[3][7] = 12.5  # a single observed value
    missing[4][::3] = np.nan
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 3, 3)[0], series_bank(7, 1, 9, 9)[0]]
    all_missing = [np.full(20, np.nan, dtype=np.float32)]
    constant = [np.full(20, 5.0, dtype=np.float32)]
    negative = [s - 200.0 for s in series_bank(9, 2, 30, 70)]
    bank = series_bank(seed=11, count=40, min_len=5, max_len=120)
    return [
        {"name": "basic", "horizon": 12, "series": basic},
        {"name": "missing_values", "horizon": 8, "series": missing},
        {"name": "all_missing", "horizon": 8, "series": all_missing},
        {"name": "short_histories", "horizon": 10, "series": short},
        {"name": "long_horizon", "horizon": 40, "series": basic[1:] + [missing[0]]},
        {"name": "longer_horizon", "horizon": 70, "series": [basic[0], short[1]]},
        {"name": "constant", "horizon": 8, "series": constant},
        {"name": "negative_values", "horizon": 20, "series": negative},
        {"name": "batch_of_40", "horizon": 16, "series": bank},
        *covariate_cases(np.random.RandomState(12)),
    ]


def record_reference(module: Any, out_dir: Path, seed: int, max_context: int) -> Path:
    """Forecasts of the reference's gluonts predictor (`Moirai2Forecast.create_predictor`)."""
    cases = []
    for case in reference_cases():
        h = case["horizon"]
        series = [s if isinstance(s, dict) else {"target": s} for s in case["series"]]
        future_names = sorted(series[0].get("future", {}))
        past_names = sorted(series[0].get("past", {}))
        point, quantiles = reference_forecast(
            module, [s["target"] for s in series], h, context_length=max_context,
            future=[np.stack([s["future"][k] for k in future_names]) for s in series] if future_names else None,
            past=[np.stack([s["past"][k] for k in past_names]) for s in series] if past_names else None,
        )
        cases.append({
            "name": case["name"],
            "horizon": h,
            "series": [
                {
                    "target": to_json_array(s["target"]),
                    **({"future": {k: to_json_array(v) for k, v in s["future"].items()}} if "future" in s else {}),
                    **({"past": {k: to_json_array(v) for k, v in s["past"].items()}} if "past" in s else {}),
                }
                for s in series
            ],
            # point [series][step]; quantiles [series][level][step] at the manifest's levels
            "expected": {"point": [to_json_array(p) for p in point], "quantiles": [to_json_array(q) for q in quantiles]},
        })
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "uni2ts.model.moirai2.Moirai2Forecast.create_predictor(batch_size=32).predict (gluonts QuantileForecast: forecast_array, mean)",
        "seed": seed,
        "context_length": max_context,
        "versions": package_versions("torch", "uni2ts", "gluonts"),
        "cases": cases,
    })
