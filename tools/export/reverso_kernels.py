"""Plain-torch stand-ins for the two GPU kernels the Reverso reference calls, so that its own
modules (reverso/model.py at shinfxh/reverso 6904526) run on the CPU and export to ONNX.

The reference imports `flashfftconv.FlashFFTConv` (a CUDA extension, HazyResearch/flash-fft-conv)
and `fla.layers.DeltaNet` (flash-linear-attention, whose forward runs triton kernels). Neither
runs without an NVIDIA GPU. Everything else stays the reference's code; exactly these change:

1. `flashfftconv.FlashFFTConv` (not installable here: it compiles CUDA) is a module of this file
   put in `sys.modules` before `reverso.model` is imported. Its forward is flash-fft-conv's own
   test reference of the gated kernel (tests/test_flashfftconv.py at b877102: `ref_fft_conv(u *
   pregate, k, n=seqlen) * postgate`): an FFT convolution of size `seqlen` in float32, the result
   in the input's dtype. Reverso builds it with `seqlen` = the input length, so the kernel (no
   implicit zero padding) computes a CIRCULAR convolution of length `seq_len`, and so does this.
2. In fla 0.4.1 (the release current at the reference's commit), `DeltaNet.forward` calls four
   triton kernels; each is swapped for fla's own plain-torch reference of it:
   - `chunk_delta_rule` / `fused_recurrent_delta_rule` (`fla.layers.delta_net`): fla's naive
     `fla.ops.delta_rule.naive.delta_rule_recurrence` (the sequential delta rule), after the
     L2 normalisation the kernels apply with `use_qk_l2norm_in_kernel` (fla.modules.l2norm's
     kernel: x / sqrt(sum(x^2) + 1e-6)). The chunk kernel refuses float32 (it asserts bfloat16);
     the recurrence computes in float32 as the reference does on the CPU.
   - `ShortConvolution.forward` (triton `causal_conv1d`): the causal depthwise convolution of its
     own nn.Conv1d (padding kernel_size - 1, first T outputs) and its SiLU.
   - `RMSNorm.forward` (triton `rms_norm`): fla's `fla.modules.layernorm.rms_norm_ref`.

3. Precision: the reference's CNNBlock casts the convolution's input, gate and output to
   bfloat16 (`x.to(torch.bfloat16)`), because FlashFFTConv computes only in 16 bits ("We only
   support FP16 and BF16"); on the GPU the whole forward also runs under bfloat16 autocast. With
   the kernel replaced, `install_float32` lets reverso.model see `torch.bfloat16` as float32, so
   the block computes in float32 (the reference's arithmetic, without the 16-bit rounding). Why:
   a bfloat16 rounding is a step of 0.4%, and two implementations (torch and ONNX Runtime differ
   in the last float32 bits of a sigmoid or a convolution sum) round some values to neighbouring
   steps; the LayerNorm after the ReLU magnifies such steps where few channels are active. Kept,
   the roundings made the ONNX graph and the reference forward differ by up to 4 units on a
   random block (a value of about 3) and by 1e-1 relative at the output of an earlier draw of
   the fixture's weights: no parity could be tested. In float32 they agree to 1e-5.

For the ONNX graph (`export_forms()`), the same mathematics in a form ONNX Runtime runs: the
circular convolution by FFTs written as matrix products (`circular_conv_matmul`: forward
transforms of the input and the kernel, their product, the inverse transform; a direct
convolution with the same kernel gives the same sums but costs L^2 per channel), and the delta
rule in fla's naive chunkwise form (the same mathematics as the recurrence, in chunks of 32; an
ONNX Loop over the 2048 steps of the recurrence took 19 s per call of 16 rows where the
reference takes 3 s). Against the recurrence, the chunkwise form differs by 2e-6 of the series'
level on the fixture, 6e-7 at Reverso-Small's size.
4. Import only: triton 3.2 (torch 2.6's pin) needs a GPU driver to even decorate fla's kernels;
   `install` sets an inert one (`_NoGPUDriver`) so that fla imports. No triton kernel runs.

tools/export/reverso_graph.py checks the graph against the reference run above.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Iterator

import numpy as np
import torch
import torch.nn.functional as F

_EXPORT_FORMS = False
DELTA_CHUNK = 32


@contextlib.contextmanager
def export_forms() -> Iterator[None]:
    """Within: the ONNX-friendly forms of the substituted kernels."""
    global _EXPORT_FORMS
    previous, _EXPORT_FORMS = _EXPORT_FORMS, True
    try:
        yield
    finally:
        _EXPORT_FORMS = previous


def _dft_split(n: int) -> tuple[int, int]:
    """n = n1 * n2 with n2 the largest divisor of n not above sqrt(n) (n2 = 1 for a prime n)."""
    n2 = max(d for d in range(1, int(n ** 0.5) + 1) if n % d == 0)
    return n // n2, n2


def _dft_matrices(n: int) -> dict[str, torch.Tensor]:
    """The constant factors of a length-n DFT split as n = n1 * n2 (computed in float64): the
    n1-point and n2-point transforms and the twiddles between them, cos and sin apart."""
    n = int(n)  # a Python number, so that a trace holds the matrices as constants
    n1, n2 = _dft_split(n)
    i1, i2 = np.arange(n1, dtype=np.float64), np.arange(n2, dtype=np.float64)
    a1 = 2 * np.pi * np.outer(i1, i1) / n1  # [k1, n1], symmetric
    a2 = 2 * np.pi * np.outer(i2, i2) / n2  # [n2, k2], symmetric
    tw = 2 * np.pi * np.outer(i1, i2) / n  # [k1, n2]
    parts = {"c1": np.cos(a1), "s1": np.sin(a1), "c2": np.cos(a2), "s2": np.sin(a2), "tc": np.cos(tw), "ts": np.sin(tw), "c1n": np.cos(a1) / n, "s1n": np.sin(a1) / n}
    return {name: torch.from_numpy(value.astype(np.float32)) for name, value in parts.items()}


def _dft(x: torch.Tensor, m: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The DFT of real x [..., n] as matrix products: x[n1 * n2' + j] arranged [n1, n2'] (row
    n1), the n1-point transform down the columns, the twiddles, the n2-point transform along the
    rows. X[k1 + n1' * k2] at [k1, k2], real and imaginary parts apart (e^-ia = cos a - i sin a)."""
    n1, n2 = m["c1"].shape[0], m["c2"].shape[0]
    w = x.reshape(*x.shape[:-1], n1, n2)
    ar, ai = m["c1"] @ w, -(m["s1"] @ w)  # [k1, n2]
    br, bi = ar * m["tc"] + ai * m["ts"], ai * m["tc"] - ar * m["ts"]
    return br @ m["c2"] + bi @ m["s2"], bi @ m["c2"] - br @ m["s2"]  # [k1, k2]


def _real_idft(yr: torch.Tensor, yi: torch.Tensor, m: dict[str, torch.Tensor]) -> torch.Tensor:
    """The real part of the inverse DFT of Y [..., k1, k2] (the layout `_dft` gives), [..., n]:
    the same factors in the opposite order with e^+ia."""
    cr, ci = yr @ m["c2"] - yi @ m["s2"], yi @ m["c2"] + yr @ m["s2"]  # [k1, n2]
    dr, di = cr * m["tc"] - ci * m["ts"], ci * m["tc"] + cr * m["ts"]
    y = m["c1n"] @ dr - m["s1n"] @ di  # [n1, n2]
    return y.reshape(*y.shape[:-2], -1)


def circular_conv_matmul(w: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """y[t] = sum_j k[j] w[(t - j) mod L] for w [B, C, L], k [C, L]: FFT(w) * FFT(k), inverted,
    with each transform written as matrix products of its split (Cooley-Tukey in one step, as
    FlashFFTConv does on the GPU). ONNX Runtime's DFT operator took 8.5 times torch's FFT at
    Reverso-Small's shapes and a quarter of the graph's time; these products run in its GEMM
    kernels. The kernel's transform is constant and ONNX Runtime folds it when the graph loads."""
    m = _dft_matrices(w.shape[-1])
    wr, wi = _dft(w, m)
    kr, ki = _dft(k, m)
    return _real_idft(wr * kr - wi * ki, wr * ki + wi * kr, m)


class FlashFFTConv(torch.nn.Module):
    """Stand-in of flashfftconv.FlashFFTConv (see the module docstring); no learned state."""

    def __init__(self, seqlen: int, dtype: torch.dtype = torch.float16, use_32_butterfly: bool = True) -> None:
        super().__init__()
        assert dtype in (torch.bfloat16, torch.float16, torch.float32)
        self.seqlen = seqlen
        self.dtype = dtype

    def forward(self, u: torch.Tensor, k: torch.Tensor, pregate: torch.Tensor | None = None, postgate: torch.Tensor | None = None) -> torch.Tensor:
        if pregate is not None:
            u = u * pregate
        length = u.shape[-1]
        if _EXPORT_FORMS:
            assert length == self.seqlen, "the export form is the circular convolution of Reverso's seqlen == input length"
            y = circular_conv_matmul(u.float(), k.float()).to(u.dtype)
        else:
            n = self.seqlen
            u_f = torch.fft.fft(u.to(torch.float32), n=n)
            k_f = torch.fft.fft(k.to(torch.float32), n=n)
            y = torch.fft.ifft(u_f * k_f, n=n).real.to(u.dtype)[..., :length]
        return y * postgate if postgate is not None else y


def l2norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """fla.modules.l2norm's kernel: x * 1 / sqrt(sum(x^2) + eps) over the last axis."""
    return x * (1.0 / torch.sqrt((x * x).sum(-1, keepdim=True) + eps))


def unit_lower_inverse(a: torch.Tensor, base: int = 8) -> torch.Tensor:
    """(I - a)^-1 for strictly lower-triangular a [..., c, c], by halves: with the diagonal halves'
    inverses X11 and X22 (both halves in one recursive call), the lower-left block is X22 a21 X11.
    Blocks of `base` rows or fewer use fla's forward substitution (row_i = a_i + a_i[:i] @
    rows[:i], then + I). Both are the usual stable triangular inversions; the halving runs the
    substitution's 31 dependent steps of a 32-row chunk as 7 steps of four 8-row blocks at once
    (the 31 steps' growing Concats were a fifth of the graph's time in ONNX Runtime). A sum of
    powers of a, (I + a)(I + a^2)(I + a^4)..., is not stable: at Reverso-Small's size a^16
    reaches 5e5 where the inverse stays within 1, and its inverse was off by 9% (the forecast by
    0.7%)."""
    c = a.shape[-1]
    if c <= base or c % 2 == 1:
        rows = [a[..., 0:1, :]]
        for i in range(1, c):
            rows.append(a[..., i:i + 1, :] + a[..., i:i + 1, :i] @ torch.cat(rows, dim=-2))
        return torch.cat(rows, dim=-2) + torch.eye(c, dtype=a.dtype)
    h = c // 2
    halves = unit_lower_inverse(torch.stack([a[..., :h, :h], a[..., h:, h:]]), base)
    x11, x22 = halves[0], halves[1]
    x21 = x22 @ a[..., h:, :h] @ x11
    return torch.cat([torch.cat([x11, torch.zeros_like(x11)], dim=-1), torch.cat([x21, x22], dim=-1)], dim=-2)


def chunkwise_delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, chunk: int = DELTA_CHUNK) -> torch.Tensor:
    """fla's naive `delta_rule_chunkwise` (fla/ops/delta_rule/naive.py, 0.4.1; chunks of 32) on
    [B, H, T, D] inputs, written for export: the in-chunk inverse (I - A)^-1 by halves over
    8-row forward substitutions (`unit_lower_inverse`) rather than fla's in-place substitution
    over all 32 rows, and the first chunk without the (zero) carried state."""
    heads, length, dk = q.shape[1], q.shape[2], q.shape[3]
    if length % chunk != 0:
        raise ValueError(f"the chunkwise delta rule needs a length divisible by {chunk}, got {length}")
    n = length // chunk
    q = q * (dk ** -0.5)
    v = v * beta[..., None]
    k_beta = k * beta[..., None]
    qc, kc, vc, kbc = (x.reshape(-1, heads, n, chunk, x.shape[-1]) for x in (q, k, v, k_beta))
    a = -(kbc @ kc.transpose(-1, -2)) * torch.tril(torch.ones(chunk, chunk), diagonal=-1)
    inverse = unit_lower_inverse(a)
    u = inverse @ vc
    w = inverse @ kbc
    lower = torch.tril(torch.ones(chunk, chunk))
    outputs = []
    state = None  # the summed k^T u of the chunks so far: zero before the first
    for i in range(n):
        q_i, k_i = qc[:, :, i], kc[:, :, i]
        u_i = u[:, :, i] if state is None else u[:, :, i] - w[:, :, i] @ state
        local = ((q_i @ k_i.transpose(-1, -2)) * lower) @ u_i
        outputs.append(local if state is None else q_i @ state + local)
        update = k_i.transpose(-1, -2) @ u_i
        state = update if state is None else state + update
    return torch.stack(outputs, dim=2).reshape(-1, heads, length, vc.shape[-1])


def delta_rule(q, k, v, beta, scale=None, initial_state=None, output_final_state=False, cu_seqlens=None, use_qk_l2norm_in_kernel=False, **_):
    """Stand-in of fla's chunk_delta_rule / fused_recurrent_delta_rule ([B, T, H, D] layout)."""
    from fla.ops.delta_rule.naive import delta_rule_recurrence

    if cu_seqlens is not None or initial_state is not None or output_final_state:
        raise NotImplementedError("Reverso calls DeltaNet without cache, state or variable lengths")
    if scale is not None and abs(scale - q.shape[-1] ** -0.5) > 1e-12:
        raise NotImplementedError("fla's naive references use the default scale 1/sqrt(d_k)")
    if use_qk_l2norm_in_kernel:
        q, k = l2norm(q), l2norm(k)
    q, k, v, beta = (x.transpose(1, 2) for x in (q, k, v, beta))
    if _EXPORT_FORMS:
        o = chunkwise_delta_rule(q, k, v, beta)
    else:
        o, _ = delta_rule_recurrence(q, k, v, beta, output_final_state=False)
    return o.transpose(1, 2), None


def short_convolution_forward(self, x, residual=None, mask=None, cache=None, output_final_state=False, cu_seqlens=None, **_):
    """Stand-in of ShortConvolution.forward: causal depthwise conv of the nn.Conv1d it is, SiLU."""
    if residual is not None or mask is not None or cache is not None or output_final_state or cu_seqlens is not None:
        raise NotImplementedError("Reverso calls ShortConvolution without residual, mask, cache or variable lengths")
    length = x.shape[1]
    y = torch.nn.Conv1d.forward(self, x.transpose(1, 2))[..., :length].transpose(1, 2)
    return (F.silu(y) if self.activation in ("silu", "swish") else y), None


def rms_norm_forward(self, x, residual=None, prenorm=False, residual_in_fp32=False):
    """Stand-in of fla's RMSNorm.forward: its plain-torch reference rms_norm_ref."""
    from fla.modules.layernorm import rms_norm_ref

    return rms_norm_ref(x, self.weight, self.bias, residual=residual, eps=self.eps, prenorm=prenorm)


class _NoGPUDriver:
    """Triton's active driver where there is no GPU. triton 3.2 (torch 2.6's pin) looks the driver
    up when fla's modules are imported (`triton.autotune` asks it for a benchmarker), and finds
    none on a CPU-only machine; with this, fla imports and sees the platform 'cpu'. No triton
    kernel runs: every one Reverso reaches is replaced above, and this driver refuses to time any."""

    class _Target:
        backend = "cpu"
        arch = 0
        warp_size = 32

    class _Utils:
        def get_device_properties(self, *_):
            raise RuntimeError("no GPU: triton kernels do not run in this export")

    utils = _Utils()

    def get_current_target(self):
        return self._Target()

    def get_benchmarker(self):
        def refuse(*_, **__):
            raise RuntimeError("no GPU: triton kernels do not run in this export")

        return refuse

    def get_current_device(self):
        return 0


class _Float32Torch(types.ModuleType):
    """`torch` as reverso.model sees it: `torch.bfloat16` is float32, all else is torch."""

    bfloat16 = torch.float32

    def __getattr__(self, name: str):
        return getattr(torch, name)


def install_float32(model_module: types.ModuleType) -> None:
    """Runs the reference's CNNBlock in float32 instead of its casts to bfloat16 (see above)."""
    model_module.torch = _Float32Torch("torch")


def install() -> None:
    """Puts the stand-ins in place; call before importing `reverso`."""
    from triton.runtime.driver import driver

    try:
        driver.active.get_current_target()
    except RuntimeError:
        driver.set_active(_NoGPUDriver())
    if "flashfftconv" not in sys.modules:
        module = types.ModuleType("flashfftconv")
        module.FlashFFTConv = FlashFFTConv
        module.__doc__ = "plain-torch stand-in installed by tools/export/reverso_kernels.py"
        sys.modules["flashfftconv"] = module
    import fla.layers.delta_net as delta_net
    from fla.modules import RMSNorm, ShortConvolution

    delta_net.chunk_delta_rule = delta_rule
    delta_net.fused_recurrent_delta_rule = delta_rule
    ShortConvolution.forward = short_convolution_forward
    RMSNorm.forward = rms_norm_forward
