"""Moirai-MoE (SalesforceAIResearch/uni2ts, package `uni2ts` 2.0.0) to ONNX.

What the ONNX graph holds: `MoiraiMoEModule.forward` of the reference up to the distribution's
parameters (the packed standard scaler in float64, the input projections, the mixture-of-experts
decoder, the parameter projection with its domain maps), at the tokens the decode reads, and the
scaler's loc and scale. The distribution is `AffineTransformed(Mixture(...), loc, scale)` of the
released checkpoints' `distr_output`: Student-t, Normal of fixed scale, negative binomial and
log-normal components (the export refuses another mixture). What the service's adapter
(models/families/foundation/moirai-moe.ts) does: the pre-processing of `MoiraiMoEForecast.create_predictor`
(shared with moirai-2), quantiles of the first forecast patch by inverting the mixture's CDF, and
past it the reference's roll-out of sample paths (each patch sampled and fed back).

Graph contract: the inputs of tools/export/moirai2.py (target, observed_mask, sample_id, time_id,
variate_id, prediction_mask, read_tokens), and
  -> params  [rows, reads, patch, 14]  float32: weights logits (4), Student-t df, loc, scale,
             Normal loc, negative binomial total_count, logits, log-normal loc, scale, then the
             scaler's loc and scale (the affine transform of the whole mixture)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ONNX_FILE, ensure_dir, package_versions, randomize_, write_manifest
from moirai2 import example_inputs, export_graph

MODEL_NAME = "moirai-moe"
COMPONENTS = ["student_t", "normal_fixed_scale", "negative_binomial", "log_normal"]
CHANNELS = ["w0", "w1", "w2", "w3", "t_df", "t_loc", "t_scale", "n_loc", "nb_total_count", "nb_logits", "ln_loc", "ln_scale", "loc", "scale"]
BATCH_SIZE = 32
NUM_SAMPLES = 100  # MoiraiMoEForecast's default num_samples


def mixture_output() -> Any:
    """The released checkpoints' distr_output (Salesforce/moirai-moe-1.0-R-small config.json)."""
    from uni2ts.distribution import LogNormalOutput, MixtureOutput, NegativeBinomialOutput, NormalFixedScaleOutput, StudentTOutput

    return MixtureOutput([StudentTOutput(), NormalFixedScaleOutput(scale=1e-3), NegativeBinomialOutput(), LogNormalOutput()])


def check_mixture(module: Any) -> float:
    """The fixed Normal scale; refuses a distr_output the adapter does not implement."""
    from uni2ts.distribution import LogNormalOutput, MixtureOutput, NegativeBinomialOutput, NormalFixedScaleOutput, StudentTOutput

    d = module.distr_output
    kinds = (StudentTOutput, NormalFixedScaleOutput, NegativeBinomialOutput, LogNormalOutput)
    if not isinstance(d, MixtureOutput) or len(d.components) != 4 or not all(isinstance(c, k) for c, k in zip(d.components, kinds)):
        raise SystemExit(f"unsupported distr_output {d!r}: the adapter implements the mixture {COMPONENTS}")
    if len(module.patch_sizes) != 1:
        raise SystemExit(f"one patch size expected (the released Moirai-MoE's), got {module.patch_sizes}")
    return float(d.components[1].scale)


def euclidean_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """torch.cdist(x, y) as torch 2.4 computes it when either side has more than 25 rows (here the
    32 expert centroids): through one matrix product of the padded norms, clamped, square root."""
    x_norm = x.pow(2).sum(dim=-1, keepdim=True)
    y_norm = y.pow(2).sum(dim=-1, keepdim=True)
    x_pad = torch.cat([-2 * x, x_norm, torch.ones_like(x_norm)], dim=-1)
    y_pad = torch.cat([y, torch.ones_like(y_norm), y_norm], dim=-1)
    return x_pad.matmul(y_pad.transpose(-1, -2)).clamp_min(1e-30).sqrt()


class RoutedExperts(torch.nn.Module):
    """uni2ts's `MoEFeedForward.forward`, the same arithmetic in a form the exporter translates.

    The reference routes each token to the 2 experts whose centroids are farthest (top-k of
    cdist), softmax-weights them and, expert by expert in index order, adds weight * expert(x) to
    the tokens routed to it, with Python-level indexing that torch 2.4's TorchScript exporter
    bakes to the traced shapes. Here the same loop gathers each expert's tokens with NonZero and
    runs the expert on them; the weighted outputs of all experts are concatenated in expert
    order, and each token gathers its own terms back from where they landed (an expert's block
    starts after the rows of the experts before it, a token's row inside it is the number of
    earlier tokens routed to that expert) and sums them from 0, as the reference's adds do: with
    two terms the order of the sum does not change it. Adding per expert instead (index_add)
    exports as zeros, a scatter and an add of the whole hidden state for each of the 32 experts,
    and ONNX Runtime's ScatterElements with an "add" reduction runs element by element; either was
    a third of the graph's time at Moirai-MoE small's size. check_onnx compares with the
    reference's own forward.
    """

    def __init__(self, ffn: Any) -> None:
        super().__init__()
        self.ffn = ffn

    def forward(self, x: torch.Tensor, centroid: torch.Tensor) -> torch.Tensor:
        ffn = self.ffn
        flat = x.reshape(-1, x.shape[-1])
        grouped = x.reshape(-1, x.shape[-2], x.shape[-1])
        gate_logits = euclidean_distance(grouped, centroid.type_as(x).unsqueeze(0)).reshape(-1, centroid.shape[0])
        weights, selected = torch.topk(gate_logits, ffn.num_experts_per_token)
        weights = torch.nn.functional.softmax(weights, dim=1, dtype=torch.float).type_as(x)
        terms = []
        for i, expert in enumerate(ffn.experts):
            hit = selected == i
            tokens = torch.nonzero(hit.any(dim=-1)).reshape(-1)
            routed = (weights * hit.to(weights.dtype)).sum(dim=-1).index_select(0, tokens).unsqueeze(-1)
            terms.append(routed * expert(flat.index_select(0, tokens)))
        stacked = torch.cat(terms)
        # routed_to[token, expert]: 1 where the token went to the expert; its row in `stacked`.
        experts = torch.arange(len(ffn.experts), device=x.device)
        routed_to = (selected.unsqueeze(-1) == experts).any(dim=-2).to(torch.int64)
        per_expert = routed_to.sum(dim=0)
        row = (torch.cumsum(per_expert, 0) - per_expert) + (torch.cumsum(routed_to, 0) - routed_to)
        picked = row.gather(1, selected)
        result = torch.zeros_like(flat)
        for k in range(ffn.num_experts_per_token):
            result = result + stacked.index_select(0, picked[:, k])
        return result.reshape(x.shape)


def with_routed_experts(module: Any) -> Any:
    """The module's MoE layers with RoutedExperts in place of MoEFeedForward (for the export only)."""
    import copy

    from uni2ts.module.ffn import MoEFeedForward

    routed = copy.deepcopy(module)
    for layer in routed.encoder.layers:
        if isinstance(layer.ffn, MoEFeedForward):
            layer.ffn = RoutedExperts(layer.ffn)
    return routed


class OnnxForward(torch.nn.Module):
    """`MoiraiMoEModule.forward` up to the distribution parameters, at `read_tokens`."""

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module

    def forward(self, target, observed_mask, sample_id, time_id, variate_id, prediction_mask, read_tokens):  # type: ignore[no-untyped-def]
        from uni2ts.common.torch_util import packed_causal_attention_mask

        m = self.module
        loc, scale = m.scaler(target, observed_mask * ~prediction_mask.unsqueeze(-1), sample_id, variate_id)
        scaled = (target - loc) / scale
        patch_size = torch.ones_like(time_id) * m.patch_sizes[0]
        reprs = m.feat_proj(torch.nn.functional.silu(m.in_proj(scaled, patch_size)), patch_size) + m.res_proj(scaled, patch_size)
        reprs = m.encoder(reprs, packed_causal_attention_mask(sample_id, time_id), time_id=time_id, var_id=variate_id)
        params = m.param_proj(reprs.index_select(1, read_tokens), patch_size.index_select(1, read_tokens))
        t, n, nb, ln = params["components"]
        shape = t["df"].shape
        channels = [params["weights_logits"], *(c.unsqueeze(-1) for c in (t["df"], t["loc"], t["scale"], n["loc"], nb["total_count"], nb["logits"], ln["loc"], ln["scale"]))]
        channels += [loc.index_select(1, read_tokens).expand(shape).unsqueeze(-1), scale.index_select(1, read_tokens).expand(shape).unsqueeze(-1)]
        return torch.cat(channels, dim=-1)


def sized_model(d_model: int, d_ff: int, num_layers: int, patch_size: int, max_seq_len: int) -> Any:
    from uni2ts.model.moirai_moe import MoiraiMoEModule

    return MoiraiMoEModule(
        distr_output=mixture_output(), d_model=d_model, d_ff=d_ff, num_layers=num_layers, patch_sizes=(patch_size,),
        max_seq_len=max_seq_len, attn_dropout_p=0.0, dropout_p=0.0, scaling=True,
    ).eval()


def randomize_centroids_(module: Any, seed: int) -> None:
    """The experts' routing centroids are a buffer the reference leaves uninitialised
    (torch.empty; a checkpoint fills them): random unit-scale rows, as a trained model's differ."""
    gen = torch.Generator().manual_seed(seed + 2)
    centroid = module.encoder.centroid
    centroid.copy_(torch.randn(centroid.shape, generator=gen, dtype=torch.float64))


def tiny_model(seed: int) -> Any:
    """A tiny Moirai-MoE of the reference's own class (its 32 experts, top 2, are fixed by uni2ts),
    d_model 64 (the smallest with a head), d_ff 8, 2 layers, patch 8; fixed random weights."""
    module = sized_model(d_model=64, d_ff=8, num_layers=2, patch_size=8, max_seq_len=64)
    randomize_(module, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 1 and "norm" in name:  # RMSNorm scales: around 1
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
        randomize_centroids_(module, seed)
    return module


def base_size_model(seed: int) -> Any:
    """Moirai-MoE small's size (moirai-moe-1.0-R-small: d_model 384, d_ff 512, 6 layers, patch 16)
    with random weights, for speed measurements only."""
    module = sized_model(d_model=384, d_ff=512, num_layers=6, patch_size=16, max_seq_len=512)
    randomize_(module, seed)
    with torch.no_grad():
        randomize_centroids_(module, seed)
    return module


def load_checkpoint(path: str) -> Any:
    """A local snapshot of Salesforce/moirai-moe-1.0-R-small or -base (config.json, model.safetensors)."""
    from uni2ts.model.moirai_moe import MoiraiMoEModule

    return MoiraiMoEModule.from_pretrained(path).eval()


def export(module: Any, out_dir: Path, version: str, source: str, max_context: int) -> Path:
    normal_scale = check_mixture(module)
    patch = module.patch_sizes[0]
    if max_context % patch != 0:
        raise SystemExit(f"--max-context must be a multiple of the patch size {patch}")
    folder = ensure_dir(out_dir / MODEL_NAME)
    wrapper = OnnxForward(with_routed_experts(module)).eval()
    module.patch_size = patch  # example_inputs reads it
    export_graph(wrapper, module, folder, "params", MODEL_NAME)
    check_onnx(module, folder / ONNX_FILE)
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": max_context,
        "patch_size": patch,
        "max_time_tokens": module.max_seq_len,
        "quantile_levels": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
        "point_output": "mean",
        "covariates": ["historical", "future"],
        "mixture": {"components": COMPONENTS, "normal_scale": normal_scale, "channels": CHANNELS},
        "num_samples": NUM_SAMPLES,
        "exported_with": package_versions("torch", "onnx", "onnxruntime", "uni2ts", "gluonts"),
    })


def params_of(distr: Any) -> np.ndarray:
    """The reference distribution object's parameters as the graph's channels: [..., 14]."""
    mix = distr.base_dist
    t, n, nb, ln = mix.components
    parts = [mix.weights.logits, *(x.unsqueeze(-1) for x in (t.df, t.loc, t.scale, n.loc, nb.total_count, nb.logits, ln.loc, ln.scale))]
    shape = t.df.shape
    parts += [torch.as_tensor(distr.loc).expand(shape).unsqueeze(-1), torch.as_tensor(distr.scale).expand(shape).unsqueeze(-1)]
    return torch.cat([p.to(torch.float64) for p in parts], dim=-1).numpy()


def check_onnx(module: Any, path: Path) -> None:
    """The graph against the reference's own forward (its sparse experts), at other shapes."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(7)
    worst = 0.0
    for rows, tokens in [(1, 2), (5, 9), (2, 30)]:
        feeds = example_inputs(module, rows, tokens, rng)
        with torch.no_grad():
            t = {k: torch.from_numpy(v) for k, v in feeds.items()}
            patch = torch.ones_like(t["time_id"]) * module.patch_sizes[0]
            distr = module(t["target"], t["observed_mask"], t["sample_id"], t["time_id"], t["variate_id"], t["prediction_mask"], patch)
            expected = params_of(distr)[:, feeds["read_tokens"]]
        (got,) = session.run(None, feeds)
        # The Categorical normalises its logits (minus their log-sum-exp): compare probabilities' logits alike.
        for arr in (got, expected):
            arr[..., :4] -= np.log(np.exp(arr[..., :4].astype(np.float64)).sum(axis=-1, keepdims=True))
        # Per channel, relative to its largest magnitude (a parameter near 0 carries the rounding of the others).
        scale = np.maximum(np.abs(expected).max(axis=(0, 1, 2)), 1e-6)
        worst = max(worst, float(np.max(np.abs(got - expected).max(axis=(0, 1, 2)) / scale)))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max error of the parameters relative to each one's largest {worst:.2e}")
