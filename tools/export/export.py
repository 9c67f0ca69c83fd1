"""Exports a foundation model to ONNX for the forecasting service (see tools/export/README.md).

    # a real checkpoint, into the service's model directory
    python tools/export/export.py chronos-2 --checkpoint /path/to/chronos-2 --out "$MODELS_DIR"
    python tools/export/export.py timesfm-2p5 --checkpoint /path/to/model.safetensors --out "$MODELS_DIR"

    # the test fixtures: a tiny model of the reference's own code with fixed random weights, and
    # the reference implementation's forecasts for fixed inputs
    python tools/export/export.py chronos-2 --tiny-fixture --out test/fixtures/onnx

    # that tiny model as a checkpoint folder, what --checkpoint reads (the install test's Hub snapshot)
    python tools/export/export.py chronos-2 --tiny-fixture --save-checkpoint test/fixtures/checkpoints/chronos-2

Runs offline: the checkpoint is a local path (nothing is downloaded), and the service never runs
Python.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

FAMILIES = ("chronos-2", "timesfm-2p5", "timesfm-2", "moirai-2", "patchtst-fm", "toto-2", "moirai-moe", "reverso", "tirex", "tabicl", "tirex-2", "tabpfn-ts")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", choices=FAMILIES)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", help="local checkpoint: a Chronos-2 directory (config.json, model.safetensors), or TimesFM 2.5's model.safetensors or its directory")
    source.add_argument("--tiny-fixture", action="store_true", help="build a tiny random model of the reference code and record reference forecasts (test fixtures)")
    source.add_argument("--random-weights", action="store_true", help="a base-size model with random weights: for speed measurements (npm run bench -- onnx --models-dir), never for forecasts")
    parser.add_argument("--out", type=Path, help="model directory: the model is written to OUT/<model>/")
    parser.add_argument("--save-checkpoint", type=Path, metavar="DIR", help="with --tiny-fixture: save the tiny model as a checkpoint folder in DIR, as --checkpoint reads it, instead of exporting it (the install test's stand-in for a Hub snapshot)")
    parser.add_argument("--version", help="version written to the manifest (default: the checkpoint's folder name, or tiny-random-seed-N)")
    parser.add_argument("--source", help="where the weights came from, written to the manifest (default: the checkpoint's path)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of --tiny-fixture")
    parser.add_argument("--max-context", type=int, default=None, help="timesfm-2p5: the ForecastConfig max_context to serve with (default 1024); timesfm-2: the context length (default 512, at most 2048); moirai-2, moirai-moe: the context_length of Moirai2Forecast, MoiraiMoEForecast (default 1680); toto-2: the context_length of Toto2GluonTSModelConfig (default 2048); 64 for the fixtures")
    parser.add_argument("--reference", action="store_true", help="also record the reference forecasts of the fixed cases for a real checkpoint")
    parser.add_argument("--plain-order", action="store_true", help="tirex with --tiny-fixture: the graph a real checkpoint gets (MatMul, ONNX Runtime's kernels) instead of the fixture's torch float32 order; for timing the tiny network (npm run bench -- onnx --models-dir), not for the parity tests")
    args = parser.parse_args(argv)
    if args.plain_order and not (args.model == "tirex" and args.tiny_fixture):
        parser.error("--plain-order is for tirex's --tiny-fixture (every other export is in plain order already)")
    if args.save_checkpoint is not None and not args.tiny_fixture:
        parser.error("--save-checkpoint is for --tiny-fixture (a real checkpoint is a folder already)")
    if args.out is None and args.save_checkpoint is None:
        parser.error("--out is required: the model directory the export is written to")

    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    if args.model == "chronos-2":
        import chronos2 as family
    elif args.model == "timesfm-2":
        import timesfm2 as family
    elif args.model == "moirai-2":
        import moirai2 as family
    elif args.model == "moirai-moe":
        import moirai_moe as family
    elif args.model == "patchtst-fm":
        import patchtst_fm as family
    elif args.model == "toto-2":
        import toto as family
    elif args.model == "tirex":
        import tirex_zero as family  # not `tirex`: that is the reference package's own name
    elif args.model == "reverso":
        import reverso_export as family
    elif args.model == "tirex-2":
        import tirex2_export as family  # not `tirex2`: that is the reference package's own name
    elif args.model == "tabicl":
        import tabicl_forecast as family  # not `tabicl`: that is the reference package's own name
    elif args.model == "tabpfn-ts":
        import tabpfn_ts as family
    else:
        import timesfm2p5 as family

    # Where a family keeps its reference records apart (for size), they come from that module,
    # which imports the family's builders (not the other way round).
    references = family
    if args.model == "moirai-moe":
        import moirai_moe_reference as references
    elif args.model == "tabpfn-ts":
        import tabpfn_ts_reference as references

    if args.tiny_fixture:
        model = family.tiny_model(args.seed)
        if args.save_checkpoint is not None:
            if not hasattr(family, "save_checkpoint"):
                parser.error(f"--save-checkpoint is not implemented for {args.model}")
            print("checkpoint:", family.save_checkpoint(model, args.save_checkpoint))
            return
        version = args.version or f"tiny-random-seed-{args.seed}"
        source_text = f"tiny configuration of the reference code with fixed random weights (seed {args.seed}); a test fixture, not a forecaster"
        if args.plain_order:
            source_text += "; in a real checkpoint's plain order, for timing (the parity fixture is in torch's order)"
    elif args.random_weights:
        model = family.base_size_model(args.seed)
        version = args.version or f"base-size-random-seed-{args.seed}"
        source_text = f"base-size configuration with random weights (seed {args.seed}); for speed measurements, not a forecaster"
    else:
        model = family.load_checkpoint(args.checkpoint)
        version = args.version or Path(args.checkpoint).resolve().name
        source_text = args.source or f"checkpoint {Path(args.checkpoint).resolve()}"

    if args.model in ("timesfm-2p5", "timesfm-2", "moirai-2", "toto-2", "moirai-moe"):
        default_context = {"timesfm-2p5": 1024, "timesfm-2": 512, "moirai-2": 1680, "toto-2": 2048, "moirai-moe": 1680}[args.model]  # moirai-2: uni2ts README's context_length
        max_context = args.max_context or (64 if args.tiny_fixture else default_context)
        manifest = family.export(model, args.out, version, source_text, max_context)
        if args.tiny_fixture or (args.reference and not args.random_weights):
            print("reference:", references.record_reference(model, args.out, args.seed, max_context))
    else:
        options = {"exact": False} if args.plain_order else {}  # only tirex takes it (checked above)
        manifest = family.export(model, args.out, version, source_text, **options)
        if args.tiny_fixture or (args.reference and not args.random_weights):
            print("reference:", references.record_reference(model, args.out, args.seed))
    print("manifest:", manifest)


if __name__ == "__main__":
    main(sys.argv[1:])
