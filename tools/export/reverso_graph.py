"""Reverso's `Model.forward` as an ONNX graph (tools/export/reverso_export.py), checked against
the reference's forward run with the CPU stand-ins of its kernels (reverso_kernels.py).

torch's TorchScript exporter is used (torch 2.6, the reference's pin), on the export forms of
reverso_kernels.py (the circular convolution's FFTs as matrix products, the chunkwise delta rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch
from onnx import TensorProto

import reverso_kernels
from common import ONNX_FILE, clean_onnx

OPSET = 18


class OnnxForward(torch.nn.Module):
    """`Model.forward` on prepared windows [rows, seq_len] -> the next output_token_len steps."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        return self.model(context.unsqueeze(-1))[..., 0]


def export_graph(model: Any, seq_len: int, folder: Path) -> Path:
    wrapper = OnnxForward(model).eval()
    example = torch.randn(3, seq_len) * 5 + 20
    raw = folder / "model.raw.onnx"
    with torch.no_grad(), reverso_kernels.export_forms():
        torch.onnx.export(wrapper, (example,), str(raw), input_names=["context"], output_names=["forecast"], opset_version=OPSET,
                          dynamic_axes={"context": {0: "rows"}, "forecast": {0: "rows"}}, dynamo=False)
    graph = onnx.shape_inference.infer_shapes(onnx.load(str(raw))).graph
    if any(vi.type.tensor_type.elem_type == TensorProto.BFLOAT16 for vi in [*graph.value_info, *graph.output]):
        raise SystemExit("the graph holds bfloat16 values: the float32 CNNBlock (reverso_kernels.install_float32) is not in place")
    clean_onnx(raw, folder / ONNX_FILE)
    raw.unlink()
    check_onnx(model, folder / ONNX_FILE, seq_len)
    return folder / ONNX_FILE


def check_onnx(model: Any, path: Path, seq_len: int) -> None:
    """The graph against the reference forward (FFT convolution, sequential delta rule) on windows
    of several shapes: noisy seasonal, constant, a step, negative and large values."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.RandomState(3)
    t = np.arange(seq_len)
    windows = np.stack([
        50 + 10 * np.sin(2 * np.pi * t / 24) + rng.randn(seq_len),
        np.full(seq_len, 7.0),
        np.where(t < seq_len // 2, 1.0, 3.0),
        -1000 + 0.5 * t + rng.randn(seq_len) * 20,
        rng.randn(seq_len) * 1e4,
    ]).astype(np.float32)
    with torch.no_grad():
        expected = OnnxForward(model)(torch.from_numpy(windows)).numpy()
    got = session.run(None, {"context": windows})[0]
    scale = np.maximum(np.abs(windows).mean(axis=1, keepdims=True), 1e-6)
    worst = float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), scale)))
    if not worst < 1e-4:
        raise SystemExit(f"ONNX graph disagrees with the reference forward: relative error {worst:.2e}")
    print(f"ONNX vs reference forward: max relative error {worst:.2e}")
