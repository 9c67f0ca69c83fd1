"""TabPFN-TS (PyPI `tabpfn-time-series` 1.0.10 over `tabpfn` 6.4.1) for the forecasting service:
its pipeline `tabpfn_time_series.TabPFNTSPipeline` (LOCAL mode) over `TabPFNRegressor` with a v2
regressor checkpoint (the pipeline's default, `tabpfn-v2-regressor-2noar4o2.ckpt`).

The pipeline turns a series into a table: one row per observed history step (the training rows)
and one per horizon step (the test rows); feature columns are the known covariates (strings
included), a running index, calendar features and sin/cos of the FFT-detected periods. The
regressor predicts a bar distribution (logits over the buckets of the checkpoint's borders) per
test row and ensemble member.

Exported here: `PerFeatureTransformer.forward` (the v2 architecture: the NaN-handling and
normalising input encoders, the per-feature and per-item attention layers, the bar-distribution
decoder) on prepared tables, [members, rows, columns] with the members' training targets,
returning the logits of the test rows. Two parts of the forward pass are replaced by graph
operations with the same results (see `_patch_for_trace`): the random feature embeddings (drawn
by a seeded torch generator for the number of feature groups at hand) become a table indexed by
that number, and the empty-feature compaction (a Python loop over rows) a stable sort.

Everything around it is the service adapter's (models/families/foundation/tabpfn-ts*.ts): the features,
the regressor's ensemble preprocessing (per member: constant-column removal, quantile or
Yeo-Johnson reshaping, categorical encoding, SVD features, the fingerprint column, the feature
shuffle, the target transform), the temperature, the translation of each member's distribution
onto the standard borders, the average and the quantiles of the bar distribution.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

os.environ.setdefault("TABPFN_DISABLE_TELEMETRY", "1")

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import clean_onnx, ensure_dir, layer_norm_scales_near_one_, package_versions, randomize_, write_manifest, ONNX_FILE, OPSET  # noqa: E402

MODEL_NAME = "tabpfn-ts"
# TabPFNTSPipeline's defaults (tabpfn-time-series 1.0.10): max_context_length 4096, the median as the point.
DEFAULT_CONTEXT = 4096
TINY_CONTEXT = 128
QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
# TabPFNRegressor's defaults (tabpfn 6.4.1) with a v2 checkpoint, which the adapter implements.
REGRESSOR = {"n_estimators": 8, "softmax_temperature": 0.9, "average_before_softmax": False, "random_state": 0}
# The v2 architecture's sizes: the released regressor has emsize 192 (48-wide feature embeddings,
# the package's fixed table for seed 42), 12 layers, 5000 buckets. The fixture keeps emsize 192 so
# that its feature embeddings take the same path; one layer, few buckets.
TINY_CONFIG = dict(emsize=192, nhead=4, nlayers=1, nhid_factor=1, features_per_group=2, max_num_classes=0, num_buckets=48, seed=42)
BASE_CONFIG = dict(emsize=192, nhead=6, nlayers=12, nhid_factor=4, features_per_group=2, max_num_classes=0, num_buckets=5000, seed=42)
# The most feature groups a table may have (the v2 config's MAX_NUMBER_OF_FEATURES 500, plus the
# SVD and fingerprint columns, in pairs).
MAX_GROUPS = 300


class TabPFNModel(torch.nn.Module):
    """The architecture and its standard-space borders, as `load_model` returns them."""

    def __init__(self, config: dict[str, Any], borders: torch.Tensor, context: int):
        super().__init__()
        from tabpfn.architectures.base import get_architecture
        from tabpfn.architectures.base.config import ModelConfig

        self.config = ModelConfig(**config)
        self.net = get_architecture(self.config, n_out=len(borders) - 1, cache_trainset_representation=False)
        self.net.eval()
        self.register_buffer("borders", borders.float())
        self.forecast_context = context

    def checkpoint(self, path: Path) -> Path:
        """A v2 checkpoint (no `architecture_name`, no inference config: `load_model` takes the v2 defaults)."""
        from tabpfn.architectures.base.bar_distribution import FullSupportBarDistribution

        criterion = FullSupportBarDistribution(self.borders.clone())
        state = {**self.net.state_dict(), **{f"criterion.{k}": v for k, v in criterion.state_dict().items()}}
        torch.save({"state_dict": state, "config": asdict(self.config)}, path)
        return path


def _borders(n: int) -> torch.Tensor:
    """Standard-space borders denser near 0, as a trained regressor's (its buckets hold equal
    shares of standardised targets)."""
    from scipy.stats import norm

    return torch.tensor(norm.ppf(np.linspace(0.002, 0.998, n + 1)) * 1.6, dtype=torch.float32)


def tiny_model(seed: int) -> TabPFNModel:
    """The v2 architecture of the package's own code in a tiny configuration, fixed random weights."""
    model = TabPFNModel(TINY_CONFIG, _borders(TINY_CONFIG["num_buckets"]), TINY_CONTEXT)
    randomize_(model.net, seed)
    with torch.no_grad():
        # The decoder's last layer scaled down: logits of a few units, as a trained head's.
        model.net.decoder_dict["standard"][-1].weight.mul_(0.5)
    layer_norm_scales_near_one_(model.net, seed + 1)
    return model


def base_size_model(seed: int) -> TabPFNModel:
    """The released regressor's configuration, random weights: for speed measurements only."""
    model = TabPFNModel(BASE_CONFIG, _borders(BASE_CONFIG["num_buckets"]), DEFAULT_CONTEXT)
    randomize_(model.net, seed)
    return model


def load_checkpoint(path: str) -> TabPFNModel:
    """A TabPFN v2 regressor checkpoint (e.g. tabpfn-v2-regressor-2noar4o2.ckpt)."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=None)
    if "architecture_name" in checkpoint or "inference_config" in checkpoint:
        raise SystemExit(f"{path} is not a v2 checkpoint (the adapter implements the v2 regressor's inference configuration)")
    state = {k: v for k, v in checkpoint["state_dict"].items() if not k.startswith("criterion.") or k == "criterion.borders"}
    borders = state.pop("criterion.borders", None)
    if borders is None:
        raise SystemExit(f"{path} is a classifier checkpoint (no bar distribution borders)")
    from tabpfn.architectures import ARCHITECTURES

    parsed, _ = ARCHITECTURES["base"].parse_config(checkpoint["config"])  # as tabpfn's load_model reads it
    model = TabPFNModel(asdict(parsed), borders, DEFAULT_CONTEXT)
    model.net.load_state_dict(state)
    return model


def _feature_embedding_table(model: TabPFNModel) -> torch.Tensor:
    """The feature embeddings `add_embeddings` draws for G groups (G = 1..MAX_GROUPS), [G, G, d]
    (row G-1 holds the G rows drawn for G groups; torch's normal sampler fills in blocks, so a
    shorter draw is not always a prefix of a longer one), or [1, MAX_GROUPS, d] where they are
    the package's fixed table (seed 42, d 48), whose rows do not depend on G."""
    net = model.net
    d = net.ninp // 4 if hasattr(net, "ninp") else model.config.emsize // 4
    if d == 48 and net.random_embedding_seed == 42:
        from tabpfn.architectures.base.transformer import COL_EMBEDDING

        return COL_EMBEDDING[:MAX_GROUPS].float().unsqueeze(0)
    table = torch.zeros(MAX_GROUPS, MAX_GROUPS, d)
    for g in range(1, MAX_GROUPS + 1):
        gen = torch.Generator().manual_seed(net.random_embedding_seed)
        table[g - 1, :g] = torch.randn((g, d), generator=gen)
    return table


class Logits(torch.nn.Module):
    """`PerFeatureTransformer.forward` on prepared member tables: features [members, rows,
    columns] and train_targets [members, train rows] -> logits [members, test rows, buckets]."""

    def __init__(self, model: TabPFNModel):
        super().__init__()
        self.net = model.net
        self.register_buffer("embeddings", _feature_embedding_table(model))

    def forward(self, features: torch.Tensor, train_targets: torch.Tensor) -> torch.Tensor:
        out = self.net(features.transpose(0, 1), train_targets.transpose(0, 1), only_return_standard_out=True)
        return out.transpose(0, 1)


def _patch_for_trace(logits: Logits) -> Any:
    """Replaces the two untraceable parts of the forward with graph operations of the same
    results; returns an undo function."""
    from tabpfn.architectures.encoders.steps import remove_empty_features_encoder_step as empty_step

    net = logits.net
    table = logits.embeddings
    original_add = net.add_embeddings
    original_select = empty_step.select_features

    def add_embeddings(x: torch.Tensor, y: torch.Tensor, **_: Any) -> tuple[torch.Tensor, torch.Tensor]:
        groups = x.shape[2]
        if table.shape[0] == 1:
            embs = table[0, :groups]
        else:
            embs = torch.index_select(table, 0, torch.tensor(groups - 1).reshape(1)).squeeze(0)[:groups]
        embs = net.feature_positional_embedding_embeddings(embs.to(x.dtype))
        return x + embs[None, None], y

    def select_features(x: torch.Tensor, sel: torch.Tensor) -> torch.Tensor:
        # The kept features of each row first, in their order, zeros after: kept feature j goes to
        # position (number kept up to j) - 1. A where, not a product: kept values may be NaN here.
        width = sel.shape[-1]
        position = torch.cumsum(sel.to(torch.int64), -1) - 1
        moves = (position.unsqueeze(-1) == torch.arange(width).view(1, 1, -1)) & sel.unsqueeze(-1)  # [B, from, to]
        return torch.where(moves.unsqueeze(0), x.unsqueeze(-1), torch.zeros((), dtype=x.dtype)).sum(2)

    net.add_embeddings = add_embeddings
    empty_step.select_features = select_features

    def undo() -> None:
        net.add_embeddings = original_add
        empty_step.select_features = original_select

    return undo


def export(model: TabPFNModel, out_dir: Path, version: str, source: str) -> Path:
    started = time.time()
    folder = ensure_dir(out_dir / MODEL_NAME)
    network = Logits(model).eval()
    rng = np.random.default_rng(0)
    example = (torch.tensor(rng.normal(size=(2, 40, 7)), dtype=torch.float32), torch.tensor(rng.normal(size=(2, 30)), dtype=torch.float32))
    raw = folder / "model.raw.onnx"
    undo = _patch_for_trace(network)
    try:
        with torch.no_grad():
            torch.onnx.export(
                network, example, str(raw), input_names=["features", "train_targets"], output_names=["logits"],
                dynamic_axes={"features": {0: "members", 1: "rows", 2: "columns"}, "train_targets": {0: "members", 1: "train_rows"}, "logits": {0: "members", 1: "test_rows"}},
                opset_version=OPSET, dynamo=False,
            )
    finally:
        undo()
    clean_onnx(raw, folder / ONNX_FILE)
    raw.unlink()
    check_onnx(model, folder / ONNX_FILE)
    print(f"exported {MODEL_NAME} in {time.time() - started:.0f} s")
    return write_manifest(folder, {
        "model": MODEL_NAME,
        "version": version,
        "source": source,
        "context_length": model.forecast_context,
        "patch_size": 1,
        "quantile_levels": QUANTILES,
        "point_output": "median",
        # the context frame's columns: known-future, past-only (NaN over the horizon) and static ones
        "covariates": ["historical", "future", "static"],
        "borders": [float(v) for v in model.borders.numpy().astype(np.float64)],
        "regressor": {**REGRESSOR, **ensemble_seeds(model)},
        "max_groups": MAX_GROUPS,
        "temporal_features": ["index", "calendar", "auto_seasonal"],
        # AutoSeasonalFeature.Config's defaults (tabpfn-time-series 1.0.10)
        "periodic": {"max_top_k": 5, "detrend_type": "linear", "zero_padding_factor": 2, "magnitude_threshold": 0.05},
        "exported_with": package_versions("torch", "onnx", "tabpfn", "tabpfn-time-series", "numpy", "pandas", "scikit-learn", "scipy", "gluonts"),
    })


def ensemble_seeds(model: TabPFNModel) -> dict[str, Any]:
    """The ensemble's random draws, which depend on random_state alone (not on the table): each
    member's feature-shift count and preprocessing seed, as TabPFNRegressor.fit draws them with
    its default random_state 0. Read from the package by fitting two tables of other shapes."""
    from tabpfn import TabPFNRegressor
    import tabpfn.preprocessing.transform as transform

    draws = []
    original = transform._fit_preprocessing_one
    seen: list[int] = []

    def recording(config: Any, X: Any, y: Any, random_state: Any = None, **kwargs: Any) -> Any:
        seen.append(int(random_state))
        return original(config, X, y, random_state, **kwargs)

    transform._fit_preprocessing_one = recording
    try:
        for rows, cols in ((30, 3), (57, 9)):
            rng = np.random.default_rng(rows)
            X, y = rng.normal(size=(rows, cols)), rng.normal(size=rows)
            seen.clear()
            reg = TabPFNRegressor(model_path=str(checkpoint_path(model)), device="cpu", random_state=REGRESSOR["random_state"], n_estimators=REGRESSOR["n_estimators"])
            reg.fit(X, y)
            configs = reg.ensemble_configs_
            draws.append({
                "feature_shifts": [int(c.feature_shift_count) for c in configs],
                "member_seeds": list(seen),
                "preprocessing": [str(c.preprocess_config.name) for c in configs],
                "target_transforms": ["none" if c.target_transform is None else "safepower" for c in configs],
            })
    finally:
        transform._fit_preprocessing_one = original
    if draws[0] != draws[1]:
        raise SystemExit(f"the ensemble's draws depend on the table: {draws}")
    return draws[0]


_CHECKPOINTS: dict[int, Path] = {}


def checkpoint_path(model: TabPFNModel) -> Path:
    """The model as a v2 checkpoint file (what the reference loads), written once per model."""
    if id(model) not in _CHECKPOINTS:
        _CHECKPOINTS[id(model)] = model.checkpoint(Path(tempfile.mkdtemp(prefix="tabpfn-ts-")) / "model.ckpt")
    return _CHECKPOINTS[id(model)]


def check_onnx(model: TabPFNModel, path: Path) -> None:
    """The graph against the package's forward (unpatched), at table shapes other than the example's,
    with NaN, constant and empty columns."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.default_rng(1)
    worst = 0.0
    for members, rows, columns, train in ((1, 100, 3, 90), (3, 20, 12, 5), (1, 300, 30, 250), (4, 9, 1, 4), (2, 50, 17, 40)):
        x = rng.normal(size=(members, rows, columns)).astype(np.float32)
        if columns > 2:
            x[:, :, 1] = 1.5  # a constant column (removed by the encoder)
            x[:, rng.integers(0, rows, 5), 2] = np.nan
        y = rng.normal(size=(members, train)).astype(np.float32)
        got = session.run(None, {"features": x, "train_targets": y})[0]
        with torch.no_grad():
            want = model.net(torch.from_numpy(x).transpose(0, 1), torch.from_numpy(y).transpose(0, 1), only_return_standard_out=True).transpose(0, 1).numpy()
        worst = max(worst, float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-6)))
    print(f"ONNX against PerFeatureTransformer.forward: max relative error {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("the exported graph does not reproduce the network")


def _pipeline(model: TabPFNModel) -> Any:
    from tabpfn_time_series import TabPFNMode, TabPFNTSPipeline

    config = {"model_path": str(checkpoint_path(model)), "device": "cpu"}
    return TabPFNTSPipeline(max_context_length=model.forecast_context, tabpfn_mode=TabPFNMode.LOCAL, tabpfn_model_config=config)


def forecast_frames(model: TabPFNModel, series: list[dict[str, Any]], horizon: int, quantiles: list[float]) -> list[dict[str, np.ndarray]]:
    """TabPFNTSPipeline.predict_df on series {start, freq, target, future (covariates over history
    and horizon, numbers or strings)}: the median and the quantiles [levels, steps] per series,
    with the timestamps of history and horizon (epoch milliseconds)."""
    context, future = [], []
    for i, s in enumerate(series):
        n = len(s["target"])
        stamps = pd.date_range(s["start"], periods=n + horizon, freq=s["freq"])
        covariates = s.get("future", {})
        context.append(pd.DataFrame({"item_id": i, "timestamp": stamps[:n], "target": s["target"], **{k: v[:n] for k, v in covariates.items()}}))
        future.append(pd.DataFrame({"item_id": i, "timestamp": stamps[n:], **{k: v[n:] for k, v in covariates.items()}}))
    pipeline = _pipeline(model)
    if any("future" in s for s in series):
        frame = pipeline.predict_df(pd.concat(context), future_df=pd.concat(future), quantiles=quantiles)
    else:
        frame = pipeline.predict_df(pd.concat(context), prediction_length=horizon, quantiles=quantiles)
    out = []
    for i, s in enumerate(series):
        rows = frame.loc[frame["item_id"] == i] if "item_id" in frame.columns else frame.loc[i]
        stamps = pd.date_range(s["start"], periods=len(s["target"]) + horizon, freq=s["freq"])
        out.append({
            "median": rows["target"].to_numpy(np.float64),
            "quantiles": np.stack([rows[q].to_numpy(np.float64) for q in quantiles]),
            "times": stamps.as_unit("ms").asi8.astype(np.float64),
        })
    return out

