"""TiRex-2's network (PyPI `tirex-2` 0.4.0, `tirex2.model.TiRex2.forward`) as an exportable graph.

Why a wrapper: `TiRex2.forward` picks rows with data-dependent indices (the bidirectional time
mixer runs its reverse pass on the known covariates only, `BiXLSTM._split_variates`; the variate
mixer drops single-variate groups, `AttentionBlock.forward`'s `torch.unique` and `keep_mask`),
which an ONNX graph of fixed operators cannot express. Both choices select whole rows and every
row is computed alone (the sLSTM, mLSTM and feed-forward layers act on each row; the attention
mixes only rows of one group), so the same numbers come from computing every row and selecting
with a mask:
- `BiXLSTM.forward`: the reverse pass runs on every row, and a row that is a known covariate
  takes `combination(cat(forward, reverse))`, every other row its forward output
  (`_recombine_variates`); a batch without known covariates skips the reverse pass (an ONNX If),
  as the reference does;
- `AttentionBlock.forward`: the attention runs over all rows with the reference's own group mask
  (same group, no covariate attending to a target), and a row alone in its group keeps its input
  (the reference's no-op for singleton groups); a batch of singleton groups only skips the block
  (an ONNX If), as the reference does;
- `Scaler.scale` / `re_scale`: their `is_binary.any()` branches (binary-aware arcsinh scaling)
  become a mask (`scale_rows`, `rescale_rows`).
Everything else is the reference's modules called as they are: the patch tokenizer, the input
residual block, the RMS norms, the sLSTM (FlashRNN's `vanilla` backend, float32 on the CPU, the
time loop unrolled, its step states stacked once: `exportable_recurrence`) and mLSTM cells
(mlstm_kernels' native chunkwise kernel), the feed-forward layers, the attention layer, the
output norm, the quantile head and the inverse tokenizer.

The window length is fixed: `TiRex2._fix_context_size` always pads (NaN, on the left) or cuts
the input to `context_len + future_len` values, so the loop over patches has a constant count.

Graph contract:
  x           [rows, context_len + future_len] float32  the prepared rows (NaN = not observed)
  group       [rows] float32                            the group (series) each row belongs to
  target_mask [rows] bool                               whether the row is a target variate
  -> quantiles [rows, Q, future_len] float32  the forecast of the last future_len steps
     (`TiRex2._predict`: the output with its last patch dropped, its last future_len steps)
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from typing import Any
from unittest import mock

import torch
from torch import nn


def stacked_flashrnn_forward(
    Wx: torch.Tensor, states: torch.Tensor, R: torch.Tensor, b: torch.Tensor, pointwise_forward: Callable[..., Any], constants: dict[str, float] | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """FlashRNN's `vanilla.flashrnn_forward` (the sLSTM's time loop on the CPU), the same steps in
    the same order, with the step states stacked once at the end. The reference writes each step
    into a preallocated buffer (`states_all[i + 1] = states`), which the unrolled export turns into
    one scatter of the whole [T + 1, ...] buffer per step: a cost quadratic in the patch count,
    37% of the graph's kernel time at TiRex-2's released size."""
    _, batch_dim, num_states, num_heads, head_dim = states.shape
    num_gates_r = R.shape[2]
    state = states[0]
    R = R.reshape(num_heads, head_dim, num_gates_r * head_dim)
    steps = []
    for Wx_t in Wx.unbind(dim=0):
        Ry = state[:, 0].transpose(0, 1).bmm(R).view(num_heads, batch_dim, num_gates_r, head_dim).permute(1, 2, 0, 3)
        state, _ = pointwise_forward(Wx_t, Ry, b, state, constants=constants or {})
        steps.append(state)
    return torch.stack(steps, dim=0), state.view(1, batch_dim, num_states, num_heads, head_dim)


def exportable_recurrence() -> contextlib.AbstractContextManager[Any]:
    """Within: FlashRNN's vanilla backend runs `stacked_flashrnn_forward` (looked up by name in
    `flashrnn.flashrnn.flashrnn` at each call, so swapping that name is enough)."""
    module = importlib.import_module("flashrnn.flashrnn.flashrnn")
    return mock.patch.object(module, "flashrnn_forward", stacked_flashrnn_forward)


def bixlstm_forward(block: Any, x: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
    """`BiXLSTM.forward` (tirex2/model/component/bi_xlstm.py), x [rows, L, D], with the reverse
    pass on all rows and the known covariates selected by a mask."""
    x_norm = block.norm_lstm(x)
    x_fwd = block.fwd_cell(x_norm)

    def with_reverse(x_norm: torch.Tensor, x_fwd: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
        x_rev = torch.flip(block.rev_cell(torch.flip(x_norm, dims=(1,)).contiguous()), dims=(1,))
        shared = block.combination(torch.cat([x_fwd, x_rev], dim=-1))
        return torch.where(known[:, None, None], shared, x_fwd).contiguous()

    def forward_only(x_norm: torch.Tensor, x_fwd: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
        return x_fwd.contiguous().clone()

    # The reference skips the reverse pass when no row is a known covariate; so does the graph
    # (an ONNX If), which halves the recurrent work of univariate batches.
    out = x + torch.cond(known.any(), with_reverse, forward_only, (x_norm, x_fwd, known))
    return out + block.ffn(block.norm_ffn(out))


def attention_block_forward(block: Any, x: torch.Tensor, group: torch.Tensor, target_mask: torch.Tensor) -> torch.Tensor:
    """`AttentionBlock.forward` (tirex2/model/component/attention_block.py) over all rows, x [L, rows, D];
    rows alone in their group keep their input, as the reference's singleton no-op."""
    same_group = group[:, None] == group[None, :]
    keep = same_group.sum(dim=1) > 1

    def mixed(x: torch.Tensor, group: torch.Tensor, target_mask: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        y = x + block.attn(block.norm_attn(x), group_vector=group, target_mask=target_mask)
        y = y + block.ffn(block.norm_ffn(y))
        return torch.where(keep[None, :, None], y, x).contiguous()

    def unchanged(x: torch.Tensor, group: torch.Tensor, target_mask: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        return x.contiguous().clone()

    # A batch of singleton groups only (univariate series) skips the block, as the reference does.
    return torch.cond(keep.any(), mixed, unchanged, (x, group, target_mask, keep))


def scale_rows(scaler: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """`Scaler.scale` (tirex2/model/component/scaler.py) with its `is_binary.any()` branches as a
    mask: rows holding only 0, 1 and NaN (with `binaryaware`) keep location 0, scale 1 and skip
    the arcsinh; the others are scaled as the reference does."""
    loc = torch.nan_to_num(torch.nanmean(x, dim=-1, keepdim=True), nan=0.0)
    scale = torch.nan_to_num(torch.nanmean((x - loc) ** 2, dim=-1, keepdim=True).sqrt(), nan=1.0)
    scale = torch.clamp_min(scale, min=scaler.eps)
    if scaler.binaryaware:
        is_binary = ((x == 0.0) | (x == 1.0) | torch.isnan(x)).all(dim=-1, keepdim=True)
        loc = torch.where(is_binary, torch.zeros_like(loc), loc)
        scale = torch.where(is_binary, torch.ones_like(scale), scale)
    else:
        is_binary = torch.zeros_like(loc, dtype=torch.bool)
    scaled = (x - loc) / scale
    if scaler.use_arcsinh:
        scaled = torch.where(is_binary, scaled, torch.arcsinh(scaled))
    return scaled, loc, scale, is_binary


def rescale_rows(scaler: Any, x: torch.Tensor, loc: torch.Tensor, scale: torch.Tensor, is_binary: torch.Tensor) -> torch.Tensor:
    """`Scaler.re_scale`, x [rows, Q, T], with the binary rows as a mask (see `scale_rows`)."""
    if scaler.use_arcsinh:
        x = torch.where(is_binary[:, None], x, torch.sinh(torch.clamp(x, -20.0, 20.0)))
    return x * scale[:, None] + loc[:, None]


class Tirex2Graph(nn.Module):
    """`TiRex2.forward` and the slicing of `TiRex2._predict` on prepared rows, as the graph contract above."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, group: torch.Tensor, target_mask: torch.Tensor) -> torch.Tensor:
        m = self.model
        # `TiRex2._prepare_forward`: known covariates have a value in the future window.
        has_future = torch.logical_not(torch.all(torch.isnan(x[:, -m.future_len :]), dim=-1))
        known = has_future & torch.logical_not(target_mask)
        h, loc, scale, is_binary = scale_rows(m.scaler, x)
        h, tokenizer_state = m.tokenizer.input_transform(h)
        h_mask = torch.logical_not(torch.isnan(h)).to(h.dtype)
        h = torch.nan_to_num(h, nan=float(m.nan_mask_value))
        h = m.input_patch_embedding(torch.cat((h, h_mask), dim=-1))
        for block in m.stack:  # `MultivariateBlock.forward`: time mixing, then variate mixing
            h = bixlstm_forward(block.time_mixer, h, known)
            h = attention_block_forward(block.variate_mixer, h.permute(1, 0, 2), group, target_mask).permute(1, 0, 2)
        h = m.output_patch_embedding(m.stack_out_norm(h))
        h = torch.unflatten(h, -1, (m.num_quantiles, m.output_patch_size)).transpose(1, 2)
        h = m.tokenizer.output_transform(h, tokenizer_state)
        h = rescale_rows(m.scaler, h, loc, scale, is_binary)
        # `TiRex2._predict`: drop the last patch (beyond the window), keep the last future_len steps.
        h = h[..., : -m.output_patch_size]
        return h[..., -m.future_len :]
