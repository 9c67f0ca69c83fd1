"""Shared helpers of the ONNX export scripts: graph clean-up, the manifest, reference records.

Nothing here runs in the service: the service reads only what these scripts write (an ONNX
file and manifest.json per model folder, see tools/export/README.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

MANIFEST_FORMAT = 1
ONNX_FILE = "model.onnx"
OPSET = 18


def clean_onnx(src: Path, dst: Path) -> None:
    """Makes the exported graph loadable by onnxruntime and small.

    - torch's einsum promotes a boolean operand to float, but ONNX Einsum takes no booleans, so
      the exporter's graph is refused by onnxruntime; a Cast to float restores torch's meaning.
    - the exporter stores a stack trace per node (metadata_props, doc strings), several times the
      size of a small model's weights; they are dropped.
    """
    model = onnx.load(str(src))
    graph = model.graph
    elem_type = {vi.name: vi.type.tensor_type.elem_type for vi in [*graph.value_info, *graph.input, *graph.output]}
    nodes = []
    for node in graph.node:
        node.doc_string = ""
        del node.metadata_props[:]
        if node.op_type == "Einsum":
            for k, name in enumerate(node.input):
                if elem_type.get(name) == TensorProto.BOOL:
                    cast = f"{name}__as_float"
                    nodes.append(helper.make_node("Cast", [name], [cast], to=TensorProto.FLOAT, name=f"{cast}__cast"))
                    node.input[k] = cast
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    for vi in graph.value_info:
        vi.doc_string = ""
    del model.metadata_props[:]
    model.doc_string = ""
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_versions(*names: str) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def write_manifest(folder: Path, fields: dict[str, Any]) -> Path:
    """Writes manifest.json beside the ONNX file, with its checksum and size."""
    onnx_path = folder / ONNX_FILE
    manifest = {
        "format": MANIFEST_FORMAT,
        **fields,
        "onnx_file": ONNX_FILE,
        "sha256": sha256_of(onnx_path),
        "bytes": onnx_path.stat().st_size,
    }
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def to_json_array(x: Any) -> Any:
    """Arrays as nested lists, NaN written as null (JSON has no NaN), 9 significant digits (exact
    for float32, the precision the references compute in)."""
    arr = np.asarray(x, dtype=np.float64)
    return [to_json_array(row) for row in arr] if arr.ndim > 1 else [None if math.isnan(v) else float(f"{v:.9g}") for v in arr]


def write_reference(folder: Path, record: dict[str, Any]) -> Path:
    path = folder / "reference.json"
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    return path


def series_bank(seed: int, count: int, min_len: int, max_len: int) -> list[np.ndarray]:
    """Deterministic test series: level, trend, a daily-like season and noise, around 100."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(count):
        n = int(rng.randint(min_len, max_len + 1))
        t = np.arange(n, dtype=np.float64)
        level = rng.uniform(50, 150)
        season = rng.uniform(2, 15) * np.sin(2 * np.pi * t / rng.choice([7, 12, 24]) + rng.uniform(0, 6))
        out.append((level + rng.uniform(-0.3, 0.3) * t + season + rng.normal(0, 2, n)).astype(np.float32))
    return out


def randomize_(module: Any, seed: int) -> None:
    """Fixed random weights of a plausible scale for every parameter of a tiny model.

    Reference initialisations (T5's factor 0.05, TimesFM's zero norm scales) make a tiny untrained
    network nearly constant, which would test little: every weight is drawn afresh instead, linear
    weights ~ N(0, 1/fan_in), norm scales ~ N(1, 0.1), other vectors ~ N(0, 0.1).
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[-1]))
            elif any(k in name for k in ("layer_norm", "_ln", "norm.", "scale")) and "per_dim_scale" not in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))


def layer_norm_scales_near_one_(module: Any, seed: int) -> None:
    """Every LayerNorm scale ~ N(1, 0.1), drawn from a generator seeded `seed`: randomize_ goes by
    parameter names, which some references' norms escape (norm1, ln, ...), and scales near 0 would
    make a tiny network's outputs nearly constant, a weak test."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, torch.nn.LayerNorm) and m.weight is not None:
                m.weight.copy_(1.0 + 0.1 * torch.randn(m.weight.shape, generator=gen))


def ensure_dir(path: Path) -> Path:
    os.makedirs(path, exist_ok=True)
    return path


def remove_raw_export(raw: Path) -> None:
    """Deletes an exporter's raw file once cleaned, and the weights a large program is saved
    with beside it (`<raw>.data`): the cleaned file holds them, and MODELS_DIR must not keep a
    stray copy of a multi-GB model."""
    for leftover in (raw, raw.with_name(raw.name + ".data")):
        leftover.unlink(missing_ok=True)


def torch_optimiser_fits(model: Any) -> bool:
    """Whether torch.onnx's own graph optimiser (onnxscript's) is worth running on `model`'s
    export: only for the tiny fixtures (under a million parameters), whose committed graphs it
    made. On the unrolled recurrences of TiRex's and TiRex-2's released sizes (78,835 nodes for
    TiRex) it was still running after 10 to 25 minutes; ONNX Runtime optimises a graph itself
    when it loads it (37 s for that one)."""
    return sum(p.numel() for p in model.parameters()) < 1_000_000


def save_onnx(program: Any, example: tuple[Any, ...], input_names: list[str], output_names: list[str], folder: Path, name: str, started: float, optimize: bool = True) -> Path:
    """An exported torch program as the cleaned `model.onnx` of `folder`; `optimize`: torch.onnx's
    own graph optimisation (onnxscript's), which ONNX Runtime's at load makes optional."""
    import torch

    with torch.no_grad():
        onnx_program = torch.onnx.export(program, example, input_names=input_names, output_names=output_names, opset_version=OPSET, dynamo=True, optimize=optimize)
    raw = folder / "model.raw.onnx"
    onnx_program.save(str(raw))
    clean_onnx(raw, folder / ONNX_FILE)
    remove_raw_export(raw)
    print(f"exported {name} in {time.time() - started:.0f} s")
    return folder / ONNX_FILE


def priced_series(rng: np.random.RandomState, n: int, horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A target of n values driven by a known-future price and promotion flag (both over the
    history and the horizon): (target, price, promo), drawing the price's noise then the
    target's from `rng`."""
    t = np.arange(n + horizon)
    price = (10 + np.sin(2 * np.pi * t / 12) * 3 + rng.normal(0, 0.3, n + horizon)).astype(np.float32)
    promo = ((t % 7) == 0).astype(np.float32)
    target = (50 + 2.5 * price[:n] + 8 * promo[:n] + rng.normal(0, 1, n) + 0.1 * t[:n]).astype(np.float32)
    return target, price, promo


def numeric_xreg_cases(rng: np.random.RandomState) -> list[dict[str, Any]]:
    """TimesFM covariate cases: targets driven by a known-future price and promotion flag, over
    the history and the horizon, for a short and a rolled-out horizon."""
    out = []
    for name, horizon, lengths in (("xreg", 12, (50, 64, 100)), ("xreg_long_horizon", 40, (30, 80))):
        series = []
        for n in lengths:
            target, price, promo = priced_series(rng, n, horizon)
            series.append({"target": target, "future": {"price": price, "promo": promo}})
        out.append({"name": name, "horizon": horizon, "series": series})
    return out


def seasonal_maker(rng: np.random.RandomState) -> Callable[..., np.ndarray]:
    """Noisy trending seasonal series, each drawing its amplitude, phase and noise from `rng` in
    that order (the feature-table models' reference cases)."""

    def seasonal(n: int, period: float, level: float = 100.0, slope: float = 0.2) -> np.ndarray:
        t = np.arange(n, dtype=np.float64)
        return level + slope * t + rng.uniform(5, 15) * np.sin(2 * np.pi * t / period + rng.uniform(0, 6)) + rng.normal(0, 1.5, n)

    return seasonal


def hourly_series(target: Any, start: str = "2024-03-09 05:00") -> dict[str, Any]:
    return {"start": start, "freq": "h", "target": target}


def feature_table_cases(seasonal: Callable[..., np.ndarray], context: int) -> list[dict[str, Any]]:
    """The reference cases tabicl and tabpfn-ts share, before their covariate cases: hourly and
    daily series with seasons, missing values, short histories, a long horizon and a history past
    the `context`. Draws from `seasonal`'s generator in a fixed order, so a script's later cases
    continue from the same state."""
    cases = [{"name": "basic", "horizon": 12, "series": [hourly_series(seasonal(40, 24)), hourly_series(seasonal(36, 12, 50), "2023-12-31 20:00")]}]
    gaps = seasonal(44, 24)
    gaps[[0, 1, 10, 11, 12, 30]] = np.nan
    single = np.full(20, np.nan)
    single[5] = 42.0
    cases.append({"name": "missing_values", "horizon": 8, "series": [hourly_series(gaps), hourly_series(single)]})
    cases.append({"name": "short_histories", "horizon": 6, "series": [hourly_series(seasonal(n, 24)) for n in (3, 5, 9)]})
    cases.append({"name": "long_horizon", "horizon": 120, "series": [hourly_series(seasonal(40, 24))]})
    cases.append({"name": "longer_than_context", "horizon": 10, "series": [hourly_series(seasonal(150, 24)), hourly_series(seasonal(context + 1, 12))]})
    daily = [{"start": "2023-12-20", "freq": "D", "target": seasonal(45, 7, 300, 1.0)}, {"start": "2024-02-25", "freq": "D", "target": seasonal(30, 7, 20, 0.0)}]
    cases.append({"name": "daily", "horizon": 14, "series": daily})
    return cases
