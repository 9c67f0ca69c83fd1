"""TiRex (NX-AI, PyPI package `tirex-ts` 1.4.2, `tirex.models.tirex.TiRexZero`) to ONNX.

The reference runs on the CPU through its `torch` backend (`load_model`'s default; the `cuda`
backend needs the xlstm package's CUDA kernels). That backend computes the sLSTM recurrence in
bfloat16: `sLSTMCell._impl_torch` casts the gate inputs, the state and the recurrent kernel to
bfloat16, `sLSTMCellTorch.slstm_forward` multiplies the state by the recurrent kernel in
bfloat16 (torch rounds the float32 sums to bfloat16), runs the gate arithmetic in float32 and
rounds the new state to bfloat16 after every patch. The export keeps every one of these
roundings (Cast to bfloat16 and back, which ONNX Runtime rounds to nearest even as torch does).

What the ONNX graph holds: `TiRexZero._forecast_single_step` on a window of exactly
`train_ctx_len` values: the reference's `PatchedTokenizer` (nan-aware standard scaling over the
window, patching), the NaN mask and `nan_mask_value`, the input residual block, the sLSTM blocks
(the reference's own `sLSTMBlock`, `sLSTMLayer` and `sLSTMCell` modules; only the cell's
recurrence function `_impl_forward_torch`, the hook the reference swaps for `torch.compile`, is
replaced by `slstm_forward_exportable`, equal to `sLSTMCellTorch.slstm_forward` bit for bit for
heads whose product torch sums in order, see TORCH_SMALL_BMM), the
output norm, the quantile head on the last patch and the inverse scaling. The time loop over the
window's `train_ctx_len / patch_size` patches is unrolled: the reference always pads (NaN, on the
left) or cuts the context to exactly `train_ctx_len`, so the count of recurrent steps is a
constant of the model and an unrolled graph needs no ONNX Loop or Scan (which ONNX Runtime runs
op by op, without fusing across steps).

For the tiny fixture (`exact_order`) the values that reach a bfloat16 rounding are computed in
torch's own float32 order (tirex_exact.py: the scaler, the input residual block, the block's
RMSNorm, the gate projections and the gate arithmetic), since a value one unit in the last place
away from torch's sometimes rounds to the neighbouring bfloat16 number; `check_onnx` checks this
computation bit for bit against the reference's modules in torch.

What the adapter (models/families/foundation/tirex.ts) does, as `ForecastModel.forecast` and
`TiRexZero._forecast_tensor` do with `max_accelerated_rollout_steps` 1 (the default): the window
of step k is the last `train_ctx_len` values of the history followed by k patches of NaN (the
reference appends NaN, not its forecasts, after every patch), one patch per step until the
horizon is covered; the median (level 0.5) is the point forecast (`_forecast_quantiles`).

Graph contract:
  window     [rows, train_ctx_len] float32  the last values (NaN = missing or padding)
  -> quantiles [rows, Q, patch_size] float32  the next patch at the model's quantile levels
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

import tirex_exact
from common import ensure_dir, package_versions, randomize_, save_onnx, series_bank, to_json_array, torch_optimiser_fits, write_manifest, write_reference

MODEL_NAME = "tirex"
QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]  # the released NX-AI/TiRex head
# torch's CPU bmm sums a product of `contraction * rows * cols` < 400 elements in one float32
# accumulator, k in order (aten/native/LinearAlgebra.cpp, baddbmm_cpu_kernel), and larger ones
# in a BLAS kernel whose order is its own.
TORCH_SMALL_BMM = 400


def round_bf16(x: torch.Tensor) -> torch.Tensor:
    """float32 rounded to bfloat16 (nearest, ties to even) and back, as `.to(torch.bfloat16)`."""
    return x.to(torch.bfloat16).to(torch.float32)


def slstm_forward_exportable(x: torch.Tensor, states: torch.Tensor, R: torch.Tensor, b: torch.Tensor, exact: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """`sLSTMCellTorch.slstm_forward` (tirex-ts 1.4.2) with float32 tensors holding its bfloat16
    values, so that ONNX Runtime (which has no bfloat16 MatMul on the CPU) runs it.

    The reference's `states[0] @ R` in bfloat16 is the float32 sum of exact products (a product
    of two bfloat16 numbers fits float32) rounded to bfloat16; for the small heads torch sums k in
    order, reproduced here term by term; larger heads use MatMul (torch's BLAS order is its own).
    The gate arithmetic is the reference's own `slstm_forward_pointwise`, or with `exact` the same
    in torch's float32 results (tirex_exact.py).
    """
    from tirex.models.slstm.cell import sLSTMCellTorch

    pointwise = tirex_exact.slstm_pointwise if exact else sLSTMCellTorch.slstm_forward_pointwise
    num_heads, head_dim, gates_dim = R.shape
    steps, rows, _ = x.shape
    kernel = R.to(torch.float32)
    state = [round_bf16(s.to(torch.float32)) for s in states.unbind(dim=0)]
    sequential = head_dim * gates_dim < TORCH_SMALL_BMM
    outputs = []
    for i in range(steps):
        y = state[0].reshape(rows, num_heads, head_dim, 1)
        if sequential:
            acc = y[:, :, 0] * kernel[:, 0]
            for k in range(1, head_dim):
                acc = acc + y[:, :, k] * kernel[:, k]
        else:
            acc = torch.matmul(y.transpose(2, 3), kernel).squeeze(2)
        ry = round_bf16(acc).reshape(rows, num_heads, 4, head_dim).transpose(1, 2).reshape(rows, -1)
        new = pointwise(x[i].to(torch.float32), ry, b.to(torch.float32), state)
        state = [round_bf16(s) for s in new]
        outputs.append(state[0])
    return torch.stack(outputs), torch.stack(state)


def exact_order(model: Any) -> bool:
    """Whether the graph computes the values that reach a bfloat16 rounding in torch's float32
    order (tirex_exact.py): for one sLSTM block of small layers (the tiny fixture), where the
    written-out products stay a few thousand operations. A real checkpoint's graph uses MatMul
    and ONNX Runtime's own kernels: its bfloat16 roundings may differ from torch's in rare
    elements (see the README)."""
    c = model.config
    return len(model.blocks) == 1 and c.input_ff_dim <= 256 and model.blocks[0].config.embedding_dim <= 64 and c.train_ctx_len % 32 == 0


def use_exportable_recurrence(model: Any, exact: bool = False) -> None:
    def recurrence(x: torch.Tensor, states: torch.Tensor, R: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return slstm_forward_exportable(x, states, R, b, exact)

    for block in model.blocks:
        block.slstm_layer.slstm_cell._impl_forward_torch = recurrence


def use_reference_recurrence(model: Any) -> None:
    from tirex.models.slstm.cell import sLSTMCellTorch

    for block in model.blocks:
        block.slstm_layer.slstm_cell._impl_forward_torch = sLSTMCellTorch.slstm_forward


class OnnxForward(torch.nn.Module):
    """`TiRexZero._forecast_single_step` on a window of `train_ctx_len` values, one patch ahead."""

    def __init__(self, model: Any, exact: bool = False) -> None:
        super().__init__()
        self.model = model
        self.exact = exact

    def hidden(self, window: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """The block stack's output and the scaler's state."""
        m = self.model
        if self.exact:
            from tirex.models.patcher import StandardScalerState

            scaled, loc, scale = tirex_exact.standard_scale(window)
            tokens = scaled.unfold(dimension=-1, size=m.tokenizer.patch_size, step=m.tokenizer.patch_size)
            scaler_state = StandardScalerState(loc=loc, scale=scale)
        else:
            tokens, scaler_state = m.tokenizer.input_transform(window)
        mask = torch.isnan(tokens).logical_not().to(tokens.dtype)
        tokens = torch.nan_to_num(tokens, nan=float(m.config.nan_mask_value))
        embed = torch.cat((tokens, mask), dim=2)
        hidden = tirex_exact.residual_block(m.input_patch_embedding, embed) if self.exact else m.input_patch_embedding(embed)
        for block in m.blocks:
            hidden = tirex_exact.block_forward(block, hidden) if self.exact else block(hidden)
        return hidden, scaler_state

    def forward(self, window: torch.Tensor) -> torch.Tensor:
        m = self.model
        hidden, scaler_state = self.hidden(window)
        # The head acts on each patch alone: only the last patch's output is the forecast.
        out = m.output_patch_embedding(m.out_norm(hidden[:, -1:, :]))
        out = torch.unflatten(out, -1, (len(m.config.quantiles), m.config.output_patch_size)).transpose(1, 2)
        return m.tokenizer.output_transform(out, scaler_state)


def build(seed: int, patch_size: int, context: int, embedding_dim: int, num_heads: int, num_blocks: int, input_ff_dim: int) -> Any:
    from tirex.models.tirex import TiRexZero

    torch.manual_seed(seed)
    config = {
        "input_patch_size": patch_size,
        "output_patch_size": patch_size,
        "quantiles": QUANTILES,
        "block_kwargs": {"embedding_dim": embedding_dim, "num_heads": num_heads, "num_blocks": num_blocks, "ffn_proj_factor": 2.6667},
        "input_ff_dim": input_ff_dim,
    }
    return TiRexZero(backend="torch", model_config=config, train_ctx_len=context).eval()


def randomize_tirex_(model: Any, seed: int) -> None:
    """Fixed random weights (common.randomize_), then the norms as the reference uses them: the
    RMSNorm scales near 1, and the sLSTM's group norm weights near 0 (it scales by 1 + weight);
    the recurrent kernel ~ N(0, 1/head_dim), its fan-in."""
    from tirex.models.slstm.block import RMSNorm

    randomize_(model, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, RMSNorm):
                module.weight.copy_(1.0 + 0.1 * torch.randn(module.weight.shape, generator=gen))
        for block in model.blocks:
            layer = block.slstm_layer
            layer.group_norm.weight.copy_(0.1 * torch.randn(layer.group_norm.weight.shape, generator=gen))
            kernel = layer.slstm_cell._recurrent_kernel_
            kernel.copy_(torch.randn(kernel.shape, generator=gen) / kernel.shape[1] ** 0.5)
        # Quantiles that do not cross, as a trained head's: every level's output weights are the
        # median's plus 1% of their own, and the levels sit 0.25 (in scaled units) apart.
        levels, patch = len(model.config.quantiles), model.config.output_patch_size
        middle = levels // 2
        for layer in (model.output_patch_embedding.output_layer, model.output_patch_embedding.residual_layer):
            weight, bias = layer.weight.view(levels, patch, -1), layer.bias.view(levels, patch)
            weight.copy_(weight[middle].clone() + 0.01 * weight)
            bias.copy_(bias[middle].clone() + 0.01 * bias)
        offsets = 0.25 * (torch.arange(levels, dtype=torch.float32) - middle)
        model.output_patch_embedding.output_layer.bias.view(levels, patch).add_(offsets.unsqueeze(1))


def tiny_model(seed: int) -> Any:
    """A tiny TiRex of the reference's classes: context 128 in 16 patches of 8, embedding 32 in
    4 heads of 8, one sLSTM block (so that the graph can follow torch's float32 order up to every
    bfloat16 rounding, see `exact_order`), the released 9 quantile levels."""
    model = build(seed, patch_size=8, context=128, embedding_dim=32, num_heads=4, num_blocks=1, input_ff_dim=64)
    randomize_tirex_(model, seed)
    return model


def base_size_model(seed: int) -> Any:
    """The released NX-AI/TiRex's size (context 2048 in patches of 32, embedding 512 in 4 heads,
    12 sLSTM blocks, input_ff_dim 2048, about 35M parameters) with random weights: for speed
    measurements only."""
    model = build(seed, patch_size=32, context=2048, embedding_dim=512, num_heads=4, num_blocks=12, input_ff_dim=2048)
    randomize_tirex_(model, seed)
    return model


def load_checkpoint(path: str) -> Any:
    """The Lightning checkpoint of NX-AI/TiRex (model.ckpt, or its folder), with the CPU backend."""
    from tirex.models.tirex import TiRexZero

    file = Path(path) / "model.ckpt" if Path(path).is_dir() else Path(path)
    return TiRexZero.from_pretrained(str(file), backend="torch", device="cpu").eval()


def check_supported(model: Any) -> None:
    c = model.config
    if c.train_ctx_len % c.input_patch_size != 0:
        raise SystemExit(f"train_ctx_len {c.train_ctx_len} is not a multiple of the patch size {c.input_patch_size}")
    if 0.5 not in c.quantiles:
        raise SystemExit("the reference's point forecast is the 0.5 level, which this head lacks")


def export(model: Any, out_dir: Path, version: str, source: str, exact: bool | None = None) -> Path:
    """`exact`: the graph in torch's float32 order (None: where `exact_order` allows it)."""
    from torch.export import Dim

    check_supported(model)
    c = model.config
    folder = ensure_dir(out_dir / MODEL_NAME)
    exact = exact_order(model) if exact is None else exact
    use_exportable_recurrence(model, exact)
    wrapper = OnnxForward(model, exact).eval()
    window = torch.randn(3, c.train_ctx_len) * 10 + 50
    window[0, : c.train_ctx_len // 2] = torch.nan
    dynamic = {"window": {0: Dim("rows")}}
    started = time.time()
    with torch.no_grad():
        program = torch.export.export(wrapper, (window,), dynamic_shapes=dynamic, strict=False)
    onnx_path = save_onnx(program, (window,), ["window"], ["quantiles"], folder, MODEL_NAME, started, optimize=torch_optimiser_fits(model))
    check_onnx(model, onnx_path, exact)
    use_reference_recurrence(model)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": c.train_ctx_len,
        "patch_size": c.input_patch_size,
        "quantile_levels": [float(q) for q in c.quantiles],
        "point_output": "median",
        "covariates": [],
        "exported_with": package_versions("torch", "onnx", "onnxscript", "tirex-ts"),
    })


def check_onnx(model: Any, path: Path, exact: bool) -> None:
    """The exported computation against the reference in torch (the block stack's output; bit for
    bit in torch's order, `exact`), and the ONNX graph against the reference's own
    `_forecast_single_step`."""
    import onnxruntime as ort

    c = model.config
    rng = np.random.RandomState(7)
    windows = (rng.randn(24, c.train_ctx_len) * rng.uniform(1, 20, (24, 1)) + rng.uniform(-50, 150, (24, 1))).astype(np.float32)
    for r, start in enumerate(rng.randint(0, c.train_ctx_len, 12)):
        windows[r, :start] = np.nan  # left padding of short histories
    windows[12:18, 5::7] = np.nan  # missing values
    windows[18:, -3 * c.input_patch_size:] = np.nan  # roll-out windows: trailing NaN patches
    tensor = torch.from_numpy(windows)
    with torch.no_grad():
        use_exportable_recurrence(model, exact)
        exportable, _ = OnnxForward(model, exact).hidden(tensor)
        use_reference_recurrence(model)
        original, _ = OnnxForward(model).hidden(tensor)
        expected = model._forecast_single_step(tensor, 1).numpy()
    if exact and not torch.equal(exportable, original):
        raise SystemExit(f"the exported computation differs from the reference's in torch: {float((exportable - original).abs().max()):.3g}")
    got = ort.InferenceSession(str(path)).run(None, {"window": windows})[0]
    level = np.nanmean(np.abs(windows), axis=1).reshape(-1, 1, 1)
    error = np.abs(got - expected) / np.maximum(np.abs(expected), level)
    worst, typical = float(error.max()), float(np.median(error))
    # Without torch's order, a float32 value a unit in the last place from torch's flips a
    # bfloat16 rounding now and then (see tirex_exact.py), by about 1e-3 of the level, and over 64
    # steps of 12 blocks the flips add up: at the released size (random weights) the reference's
    # own recurrence with its product summed in another order (slstm_forward_exportable in torch)
    # moves its forecast by up to 1.0e-2 of the level, and the graph is 2.1e-2 from the reference
    # at worst, 7e-4 typically. So the worst error gets a loose bound and the typical one a tight one.
    limit, typical_limit = (1e-4, 1e-4) if exact else (5e-2, 2e-3)
    if not (worst < limit and typical < typical_limit):
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e} at worst, {typical:.2e} typically")
    in_torch = "bit-exact" if exact else f"{float((exportable - original).abs().max()):.2e} apart"
    print(f"ONNX vs reference forward: max relative error {worst:.2e}, median {typical:.2e} (the exported computation in torch: {in_torch} up to the head)")


def reference_forecast(model: Any, histories: list[np.ndarray], horizon: int, batch_size: int = 512) -> dict[str, np.ndarray]:
    """The reference's own forecast of a batch of series, on the CPU: `ForecastModel.forecast`
    with a list of series (NaN = missing), `prediction_length=horizon`, as a user calls it, with
    the reference's bfloat16 recurrence. Returns {"median": [n, horizon] (its mean output, the
    0.5 level), "quantiles": [n, levels, horizon]}."""
    use_reference_recurrence(model)
    with torch.no_grad():
        quantiles, mean = model.forecast([np.asarray(h, dtype=np.float32) for h in histories], output_type="numpy", batch_size=batch_size, prediction_length=horizon)
    return {"median": np.asarray(mean), "quantiles": np.asarray(quantiles).transpose(0, 2, 1)}


def reference_cases(context: int) -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 4, 30, 90)]
    missing[0][10:15] = np.nan
    missing[1][:5] = np.nan
    missing[2][-3:] = np.nan
    missing[3][::4] = np.nan
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 2, 2)[0], series_bank(7, 1, 5, 5)[0], series_bank(8, 1, 11, 11)[0]]
    flat = np.full(20, 42.0, dtype=np.float32)  # zero spread: the scaler's |loc| + eps fallback
    long_history = series_bank(9, 2, 250, 400)
    bank = series_bank(seed=11, count=40, min_len=5, max_len=200)
    return [
        {"name": "basic", "horizon": 8, "series": basic},
        {"name": "missing_values", "horizon": 16, "series": missing},
        {"name": "short_histories", "horizon": 10, "series": [*short, flat]},
        {"name": "long_history", "horizon": 20, "series": long_history},
        {"name": "long_horizon", "horizon": 60, "series": [basic[0], basic[2], long_history[0]]},
        {"name": "horizon_past_context", "horizon": context + 20, "series": [basic[1], short[2]]},
        {"name": "batch_of_40", "horizon": 30, "series": bank},
    ]


def record_reference(model: Any, out_dir: Path, seed: int) -> Path:
    """Forecasts of the reference's `ForecastModel.forecast` (list input) for the fixed cases."""
    cases = []
    for case in reference_cases(model.config.train_ctx_len):
        got = reference_forecast(model, case["series"], case["horizon"])
        crossing = float(np.min(np.diff(got["quantiles"], axis=1)))
        if crossing < 0:
            raise SystemExit(f"case {case['name']}: the reference's quantiles cross ({crossing:.3g})")
        cases.append({
            "name": case["name"],
            "horizon": case["horizon"],
            "series": [{"target": to_json_array(s)} for s in case["series"]],
            "expected": {"median": [to_json_array(m) for m in got["median"]], "quantiles": [to_json_array(q) for q in got["quantiles"]]},
        })
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "tirex.models.tirex.TiRexZero.forecast(context=[series...], prediction_length=horizon) with backend 'torch' on the CPU (tirex-ts 1.4.2)",
        "seed": seed,
        "versions": package_versions("torch", "tirex-ts"),
        "cases": cases,
    })
