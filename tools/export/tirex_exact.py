"""torch's CPU float32 arithmetic order, written out as elementwise operations, for TiRex's export.

Why: the reference (tirex-ts 1.4.2, `torch` backend) rounds the sLSTM's gate inputs and states
to bfloat16. A float32 value one unit in the last place away from torch's lands on the other side
of a bfloat16 rounding boundary about once in 65,000 roundings, and such a flip moves the tiny
fixture's forecast by up to 1e-3 of the series' level, ten times the parity tolerance. So for
the tiny fixture the graph computes every value that reaches a bfloat16 rounding in torch's own
order: what ONNX Runtime then evaluates is a chain of IEEE operations (Add, Mul, Div, Sqrt,
Cast) whose results are fixed, plus exp, log and tanh in float64 rounded to float32 (torch's
float32 versions are correctly rounded all but about 1% of the time).

The orders, measured on the reference's torch 2.11 CPU kernels (x86-64) against these functions
(tools/export/tirex_zero.py checks the whole input path bit for bit against the reference):
- matrix products (F.linear, einsum through bmm): one fused multiply-add chain per output over k
  in order from zero (`fma_chain`), the bias added after;
- sums over a contiguous last dimension of a multiple of 32 (sum, nansum, mean): four 8-lane
  accumulators over chunks of 32, the four added in order, then the 8 lanes in order;
- sigmoid 1 / (1 + exp(-x)), log-sigmoid min(x, 0) - log1p(exp(-|x|)).

Only what precedes a bfloat16 rounding needs this: with one sLSTM block that is the scaler, the
input residual block, the block's RMSNorm, the gate projections and the cell's gate arithmetic.
"""

from __future__ import annotations

import torch

LANES, VECTORS = 8, 4


def to_f32(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float32)


def fma_chain(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x [..., K] times weight [N, K]^T, as one fused multiply-add per k in order (float64 holds
    the product and the sum of float32 numbers before the single rounding of an FMA)."""
    w = weight.to(torch.float64)
    acc = None
    for k in range(weight.shape[1]):
        term = x[..., k : k + 1].to(torch.float64) * w[:, k]
        acc = to_f32(term if acc is None else term + acc.to(torch.float64))
    return acc


def linear(layer: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    out = fma_chain(x, layer.weight)
    return out + layer.bias if layer.bias is not None else out


def lane_sum(x: torch.Tensor) -> torch.Tensor:
    """Sum over the last dimension (a multiple of 32) in torch's vectorised order, keepdim."""
    n = x.shape[-1]
    width = LANES * VECTORS
    if n % width != 0:
        raise ValueError(f"lane_sum needs a multiple of {width} values, got {n}")
    acc = x[..., :width]
    for start in range(width, n, width):
        acc = acc + x[..., start : start + width]
    vec = acc[..., :LANES]
    for v in range(1, VECTORS):
        vec = vec + acc[..., v * LANES : (v + 1) * LANES]
    total = vec[..., 0:1]
    for j in range(1, LANES):
        total = total + vec[..., j : j + 1]
    return total


def nanmean(x: torch.Tensor) -> torch.Tensor:
    """torch.nanmean(x, dim=-1, keepdim=True): the nansum in lane order over the count."""
    observed = torch.isnan(x).logical_not()
    total = lane_sum(torch.where(observed, x, torch.zeros_like(x)))
    return total / observed.to(torch.float32).sum(dim=-1, keepdim=True)


def standard_scale(x: torch.Tensor, eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`StandardScaler.scale` (tirex/models/patcher.py): (scaled, loc, scale)."""
    loc = torch.nan_to_num(nanmean(x), nan=0.0)
    scale = torch.nan_to_num(nanmean((x - loc).square()).sqrt(), nan=1.0)
    scale = torch.where(scale == 0, torch.abs(loc) + eps, scale)
    return (x - loc) / scale, loc, scale


def residual_block(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`ResidualBlock.forward` (tirex/models/tirex.py)."""
    hidden = torch.relu(linear(block.hidden_layer, x))
    return linear(block.output_layer, hidden) + linear(block.residual_layer, x)


def rms_norm(norm: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`RMSNorm.forward` (tirex/models/slstm/block.py): x * rsqrt(mean(x^2) + eps) * weight."""
    mean = lane_sum(x * x) / x.shape[-1]
    return x * (1.0 / torch.sqrt(mean + norm.eps)) * norm.weight


def headwise(layer: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`LinearHeadwiseExpand.forward` (tirex/models/slstm/layer.py), one FMA chain per head."""
    heads = x.view(*x.shape[:-1], layer.num_heads, -1)
    out = torch.stack([fma_chain(heads[..., h, :], layer.weight[h]) for h in range(layer.num_heads)], dim=-2)
    return out.reshape(*x.shape[:-1], -1)


def exp(x: torch.Tensor) -> torch.Tensor:
    return to_f32(torch.exp(x.to(torch.float64)))


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return 1.0 / (1.0 + exp(-x))


def log_sigmoid(x: torch.Tensor) -> torch.Tensor:
    e = exp(-torch.abs(x)).to(torch.float64)
    return torch.minimum(x, torch.zeros_like(x)) - to_f32(torch.log(1.0 + e))


def slstm_pointwise(Wx: torch.Tensor, Ry: torch.Tensor, b: torch.Tensor, states: list[torch.Tensor]) -> list[torch.Tensor]:
    """`sLSTMCellTorch.slstm_forward_pointwise` (tirex/models/slstm/cell.py) in its own order,
    with its transcendental functions computed as `exp`, `sigmoid` and `log_sigmoid` above."""
    y, c, n, m = states
    raw = Wx + Ry + b
    iraw, fraw, zraw, oraw = torch.unbind(raw.view(raw.shape[0], 4, -1), dim=1)
    logfplusm = m + log_sigmoid(torch.clamp(fraw, max=15))
    mnew = torch.where(torch.all(n == 0.0), iraw, torch.max(iraw, logfplusm))
    ogate = sigmoid(oraw)
    igate = torch.minimum(exp(iraw - mnew), torch.ones_like(iraw))
    fgate = torch.minimum(exp(logfplusm - mnew), torch.ones_like(iraw))
    zgate = to_f32(torch.tanh(zraw.to(torch.float64)))
    cnew = fgate * c + igate * zgate
    nnew = fgate * n + igate
    hnew = ogate * cnew / nnew
    return [hnew, cnew, nnew, mnew]


def slstm_layer(layer: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`sLSTMLayer.forward` with the gate projections in torch's order; the cell and the group
    norm are the reference's modules."""
    x_g = torch.cat((headwise(layer.fgate, x), headwise(layer.igate, x), headwise(layer.zgate, x), headwise(layer.ogate, x)), dim=-1)
    y, _ = layer.slstm_cell(x_g, state=None)
    return layer.group_norm(y).transpose(1, 2).view(x.shape[0], x.shape[1], -1)


def block_forward(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`sLSTMBlock.forward`: the sLSTM half in torch's order, the feed-forward half (after the
    block's last bfloat16 rounding) the reference's modules."""
    x = x + slstm_layer(block.slstm_layer, rms_norm(block.norm_slstm, x))
    return x + block.ffn(block.norm_ffn(x))

