#!/bin/sh
# Run in the image build, after `npm prune --omit=dev`: removes the native binaries that packages
# ship for every platform but this one (ONNX Runtime's, the Temporal core bridge's). They are most
# of node_modules, and only this platform's can load here.
set -eu
arch="$(node -p process.arch)"
case "$arch" in x64) rust=x86_64 ;; arm64) rust=aarch64 ;; *) rust="$arch" ;; esac
for dir in node_modules/onnxruntime-node/bin/napi-v*/*/*; do
  [ -d "$dir" ] && [ "$dir" != "${dir%/linux/$arch}" ] || rm -rf "$dir"
done
for dir in node_modules/@temporalio/core-bridge/releases/*; do
  [ "$(basename "$dir")" = "$rust-unknown-linux-gnu" ] || rm -rf "$dir"
done
