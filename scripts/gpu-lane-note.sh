#!/usr/bin/env bash
# scripts/gpu-lane-note.sh: says, visibly, whether the GPU lane can run here.
build=${1:-build}
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU lane: a GPU is present; run 'make gpu-test' (or scripts/gpu-dev/gpu-lane.sh) for it."
else
  # -FA: without the fixture that prepares the tests' environment (it has no label).
  n=$(cd "$build" && ctest -N -L gpu -FA '.*' 2>/dev/null | sed -n 's/^Total Tests: //p')
  echo "GPU lane: SKIPPED (${n:-0} tests labelled 'gpu'): no NVIDIA GPU on this machine."
fi
