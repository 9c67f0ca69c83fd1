"""Reference records of Moirai-MoE (uni2ts 2.0.0) for the adapter's tests: see moirai_moe.py.

The reference pipeline, `MoiraiMoEForecast.create_predictor(batch_size).predict(dataset)`, samples
(`num_samples` paths; gluonts SampleForecast: nearest-rank quantiles, sample mean). What is
recorded per case:
  - `first_patch`: the reference module's distribution for the first forecast patch (the object
    its forward samples from), its quantiles at the levels 0.1..0.9 by bisection of its CDF and
    its mean (the object's own `.mean`). torch's StudentT and the uni2ts NegativeBinomial have no
    `cdf`, so the CDF is evaluated with scipy on the object's parameters, checked here against
    the object's own `log_prob` (and torch's cdf where it has one).
  - `paths` (horizons past one patch): a few of the reference's own sampled paths, and for each
    later patch the distribution the reference sampled it from (quantiles by inversion): what
    is deterministic in its roll-out, given the fed-back samples.
  - `sampled`: the pipeline's quantiles and mean with many samples and a fixed torch seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from common import ensure_dir, package_versions, series_bank, to_json_array, write_reference
from moirai2 import covariate_cases
from moirai_moe import BATCH_SIZE, MODEL_NAME, NUM_SAMPLES, check_mixture, params_of

LEVELS = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
MC_SAMPLES = 2000  # the sampled record's num_samples: Monte Carlo error of a few percent of the spread
PATHS = 3  # sampled paths recorded per series for the roll-out check


def mixture_cdf(params: np.ndarray, y: np.ndarray, normal_scale: float) -> np.ndarray:
    """P(Y <= y) of AffineTransformed(Mixture[StudentT, Normal, NegativeBinomial, LogNormal], loc, scale)."""
    from scipy import stats

    p = params.astype(np.float64)
    logits = p[..., :4]
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    z = (y - p[..., 12]) / p[..., 13]
    t = stats.t.cdf(z, p[..., 4], loc=p[..., 5], scale=p[..., 6])
    n = stats.norm.cdf(z, loc=p[..., 7], scale=normal_scale)
    # uni2ts's NegativeBinomial(total_count, logits): Poisson(Gamma(total_count, rate exp(-logits))),
    # scipy's nbinom with n = total_count, p = sigmoid(-logits); counts, so the floor of z.
    nb = np.where(z < 0, 0.0, stats.nbinom.cdf(np.floor(np.maximum(z, 0)), p[..., 8], 1.0 / (1.0 + np.exp(p[..., 9]))))
    ln = np.where(z <= 0, 0.0, stats.norm.cdf((np.log(np.maximum(z, 1e-300)) - p[..., 10]) / p[..., 11]))
    return w[..., 0] * t + w[..., 1] * n + w[..., 2] * nb + w[..., 3] * ln


def quantiles_by_inversion(params: np.ndarray, normal_scale: float, levels: np.ndarray = LEVELS) -> np.ndarray:
    """The smallest y with CDF(y) >= level, by bisection in float64: [..., levels]."""
    out = np.empty(params.shape[:-1] + (len(levels),))
    loc, scale = params[..., 12].astype(np.float64), params[..., 13].astype(np.float64)
    for k, q in enumerate(levels):
        lo, hi = loc - scale, loc + scale
        for _ in range(200):  # widen until F(lo) < q <= F(hi)
            low_bad = mixture_cdf(params, lo, normal_scale) >= q
            high_bad = mixture_cdf(params, hi, normal_scale) < q
            if not (low_bad.any() or high_bad.any()):
                break
            lo = np.where(low_bad, lo - 2 * (hi - lo), lo)
            hi = np.where(high_bad, hi + 2 * (hi - lo), hi)
        for _ in range(200):
            mid = (lo + hi) / 2
            above = mixture_cdf(params, mid, normal_scale) >= q
            lo, hi = np.where(above, lo, mid), np.where(above, mid, hi)
        out[..., k] = hi
    return out


def check_cdf_against_reference(distr: Any, params: np.ndarray, normal_scale: float) -> None:
    """The scipy CDF's parameterisation against the reference object: its components' own
    log_prob (densities) and torch's cdf where the component has one."""
    from scipy import stats

    mix = distr.base_dist
    t, n, nb, ln = mix.components
    p = params.astype(np.float64)  # [..., tokens, patch, 14]: every token of the call
    x = torch.linspace(0.5, 3.0, p.shape[-2]).expand(p.shape[:-1]).contiguous()
    xs = x.numpy().astype(np.float64)
    checks = [
        (t.log_prob(x), stats.t.logpdf(xs, p[..., 4], loc=p[..., 5], scale=p[..., 6])),
        (n.cdf(x), stats.norm.cdf(xs, loc=p[..., 7], scale=normal_scale)),
        (nb.log_prob(torch.floor(x)), stats.nbinom.logpmf(np.floor(xs), p[..., 8], 1.0 / (1.0 + np.exp(p[..., 9])))),
        (ln.cdf(x), stats.norm.cdf((np.log(xs) - p[..., 10]) / p[..., 11])),
    ]
    for got, want in checks:
        err = np.max(np.abs(got.double().numpy() - want) / np.maximum(np.abs(want), 1e-3))
        if not err < 1e-4:
            raise SystemExit(f"the scipy CDF does not match the reference distribution ({err:.2e})")


def forecaster(module: Any, horizon: int, context_length: int, num_samples: int, future_dims: int = 0, past_dims: int = 0) -> Any:
    from uni2ts.model.moirai_moe import MoiraiMoEForecast

    return MoiraiMoEForecast(
        module=module, prediction_length=horizon, context_length=context_length, patch_size=module.patch_sizes[0], num_samples=num_samples,
        target_dim=1, feat_dynamic_real_dim=future_dims, past_feat_dynamic_real_dim=past_dims,
    )


def dataset_of(histories: list[np.ndarray], future: list[np.ndarray] | None, past: list[np.ndarray] | None) -> list[dict[str, Any]]:
    import pandas as pd

    out = []
    for i, h in enumerate(histories):
        entry: dict[str, Any] = {"start": pd.Period("2024-01-01 00:00", freq="h"), "target": np.asarray(h, dtype=np.float32)}
        if future is not None:
            entry["feat_dynamic_real"] = np.asarray(future[i], dtype=np.float32)
        if past is not None:
            entry["past_feat_dynamic_real"] = np.asarray(past[i], dtype=np.float32)
        out.append(entry)
    return out


def reference_forecast(model: Any, histories: list[np.ndarray], horizon: int, context_length: int = 1680, batch_size: int = BATCH_SIZE,
                       num_samples: int = NUM_SAMPLES, future: list[np.ndarray] | None = None, past: list[np.ndarray] | None = None,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The reference pipeline on CPU, batched: `MoiraiMoEForecast.create_predictor(batch_size)`
    on a gluonts dataset (torch seeded). Returns the sample means [series, horizon], the
    quantiles at 0.1..0.9 [series, 9, horizon] (SampleForecast.quantile) and the forecasts."""
    k_future = 0 if future is None else future[0].shape[0]
    k_past = 0 if past is None else past[0].shape[0]
    predictor = forecaster(model, horizon, context_length, num_samples, k_future, k_past).create_predictor(batch_size=batch_size, device="cpu")
    torch.manual_seed(seed)
    with torch.no_grad():
        forecasts = list(predictor.predict(dataset_of(histories, future, past)))
    return np.stack([f.mean for f in forecasts]), np.stack([np.stack([f.quantile(q) for q in LEVELS]) for f in forecasts]), forecasts


def captured_calls(module: Any) -> tuple[list[Any], Any]:
    """Records every distribution the module returns (the calls of the reference's roll-out)."""
    calls: list[Any] = []
    original = module.forward

    def recording(*args: Any, **kwargs: Any) -> Any:
        distr = original(*args, **kwargs)
        calls.append(distr)
        return distr

    module.forward = recording
    return calls, original


def reference_cases() -> list[dict[str, Any]]:
    basic = [series_bank(1, 1, 50, 50)[0], series_bank(2, 1, 64, 64)[0], series_bank(3, 1, 100, 100)[0]]
    missing = [s.copy() for s in series_bank(4, 4, 30, 60)]
    missing[0][10:15] = np.nan
    missing[1][:12] = np.nan
    missing[2][-3:] = np.nan
    missing[3][::3] = np.nan
    short = [series_bank(5, 1, 1, 1)[0], series_bank(6, 1, 3, 3)[0], series_bank(7, 1, 9, 9)[0]]
    counts = [np.random.RandomState(8).poisson(3.0, 60).astype(np.float32)]  # small counts: the discrete component
    negative = [s - 200.0 for s in series_bank(9, 2, 30, 70)]
    bank = series_bank(seed=11, count=40, min_len=5, max_len=120)
    covariates = [c for c in covariate_cases(np.random.RandomState(12)) if c["name"] in ("covariates", "covariates_long_horizon")]
    covariates[0]["horizon"] = 8
    covariates[1]["horizon"] = 20
    return [
        {"name": "basic", "horizon": 8, "series": basic},
        {"name": "missing_values", "horizon": 6, "series": missing},
        {"name": "short_histories", "horizon": 8, "series": short},
        {"name": "counts", "horizon": 8, "series": counts},
        {"name": "negative_values", "horizon": 5, "series": negative},
        {"name": "batch_of_40", "horizon": 8, "series": bank},
        {"name": "long_horizon", "horizon": 20, "series": basic[:2]},
        *covariates,
    ]


def first_patch(distr: Any, context_tokens: int, steps: int, normal_scale: float) -> dict[str, list[np.ndarray]]:
    """The first forecast patch of the module's first call: quantiles at LEVELS by inversion,
    [series][level][step], and the distribution's own mean [series][step]."""
    params = params_of(distr)[:, context_tokens - 1, :]  # [series, patch, 14]
    return {
        "quantiles": [q[:steps].T for q in quantiles_by_inversion(params, normal_scale)],
        "mean": list(distr.mean[:, context_tokens - 1, :steps].double().numpy()),
    }


def reference_check(model: Any, case: dict[str, Any], context_length: int = 1680) -> dict[str, list[np.ndarray]]:
    """A reference.json case's first patch recomputed by the reference (the benchmark's identity
    check), keyed by its path in the case; sampled values are Monte Carlo, so not compared.
    Cases of targets alone."""
    if any(set(s) != {"target"} for s in case["series"]):
        return {}
    histories = [np.array([np.nan if v is None else v for v in s["target"]], dtype=np.float32) for s in case["series"]]
    calls, original = captured_calls(model)
    try:
        reference_forecast(model, histories, case["horizon"], context_length=context_length, batch_size=len(histories))
    finally:
        model.forward = original
    patch = model.patch_sizes[0]
    first = first_patch(calls[0], context_length // patch, min(case["horizon"], patch), check_mixture(model))
    return {f"first_patch.{key}": values for key, values in first.items()}


def record_reference(module: Any, out_dir: Path, seed: int, max_context: int) -> Path:
    normal_scale = check_mixture(module)
    patch = module.patch_sizes[0]
    context_tokens = max_context // patch
    cases = []
    for case in reference_cases():
        h = case["horizon"]
        series = [s if isinstance(s, dict) else {"target": s} for s in case["series"]]
        future_names = sorted(series[0].get("future", {}))
        past_names = sorted(series[0].get("past", {}))
        inputs = dict(
            future=[np.stack([s["future"][k] for k in future_names]) for s in series] if future_names else None,
            past=[np.stack([s["past"][k] for k in past_names]) for s in series] if past_names else None,
        )
        histories = [s["target"] for s in series]
        # One pipeline run with the default num_samples, its module calls recorded.
        calls, original = captured_calls(module)
        try:
            _, _, forecasts = reference_forecast(module, histories, h, context_length=max_context, batch_size=len(series), seed=seed, **inputs)
        finally:
            module.forward = original
        check_cdf_against_reference(calls[0], params_of(calls[0]), normal_scale)
        first = first_patch(calls[0], context_tokens, min(h, patch), normal_scale)
        record = {key: [to_json_array(v) for v in values] for key, values in first.items()}
        paths = None
        if h > patch:
            samples = np.stack([f.samples for f in forecasts])  # [series, samples, horizon]
            paths = {"values": [[to_json_array(samples[b, s]) for s in range(PATHS)] for b in range(len(series))], "quantiles": []}
            for b in range(len(series)):
                per_path = []
                for s in range(PATHS):
                    per_patch = []
                    for k in range(1, len(calls)):  # call k gives patch k from the path's patches < k
                        p = params_of(calls[k])[s, b, context_tokens + k - 1, : min(patch, h - k * patch), :]
                        per_patch.append(to_json_array(quantiles_by_inversion(p, normal_scale).T))
                    per_path.append(per_patch)
                paths["quantiles"].append(per_path)
        mean, quantiles, _ = reference_forecast(module, histories, h, context_length=max_context, num_samples=MC_SAMPLES, seed=seed, **inputs)
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
            # quantiles [series][level][step] of the first patch (or the horizon, if shorter)
            "first_patch": record,
            # paths: values [series][path][step]; quantiles [series][path][patch - 1][level][step]
            **({"paths": paths} if paths else {}),
            "sampled": {"num_samples": MC_SAMPLES, "mean": [to_json_array(m) for m in mean], "quantiles": [to_json_array(q) for q in quantiles]},
        })
    return write_reference(ensure_dir(out_dir / MODEL_NAME), {
        "model": MODEL_NAME,
        "reference": "uni2ts.model.moirai_moe.MoiraiMoEForecast.create_predictor(batch_size).predict (gluonts SampleForecast); the module's distributions",
        "seed": seed,
        "context_length": max_context,
        "levels": LEVELS.tolist(),
        "versions": package_versions("torch", "uni2ts", "gluonts", "scipy"),
        "cases": cases,
    })
