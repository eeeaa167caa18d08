#!/usr/bin/env bash
# The main command: set up, then run the whole method on the built-in example
# (examples/btio_like.c, a program that does its I/O as NAS BT-IO does):
#   1. trace it under mpirun                    -> out/example/trace/
#   2. build its I/O model                      -> out/example/model.json (+ model.png)
#   3. replay the model on this machine (local.yaml) with the built-in replayer
#                                               -> out/example/replay/
#   4. predict and compare this machine with the paper's four virtual clusters
#                                               -> out/example/compare.txt, figures/
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=out/example
mkdir -p "$out/data"
mpicc -O2 -Wall -Wextra -o "$out/btio_like" examples/btio_like.c
mpi=(mpirun --oversubscribe -np 4)
[[ $(id -u) == 0 ]] && mpi+=(--allow-run-as-root)
iomodel=.venv/bin/iomodel

echo "== 1. trace: 4 ranks, a 32x32x32 grid of 5-double cells, 40 time steps"
$iomodel trace -o "$out/trace" -- "${mpi[@]}" "$out/btio_like" "$out/data" 32 32 32 40
$iomodel trace-info "$out/trace" --parquet "$out/tables" | tee "$out/trace-info.txt"
$iomodel trace-info "$out/trace" --events > "$out/events.txt"

echo; echo "== 2. model"
$iomodel analyze "$out/trace" -o "$out/model.json" | tee "$out/model.txt"
if .venv/bin/python -c 'import matplotlib' 2>/dev/null; then
  $iomodel plot "$out/model.json" -o "$out/model.png"
fi
$iomodel ior "$out/model.json" --vc local > "$out/ior.sh"

echo; echo "== 3. replay on this machine (local.yaml, built-in replayer)"
$iomodel replay "$out/model.json" --vc local --backend builtin -o "$out/replay" | tee "$out/replay.txt"

echo; echo "== 4. predict and compare: this machine and the paper's virtual clusters 1 to 4"
$iomodel predict "$out/model.json" --vc local --replay "$out/replay" > "$out/predict-local.txt"
$iomodel compare "$out/model.json" --vc local vc1 vc2 vc3 vc4 \
  --profile "local=$out/replay/profile.parquet" --plot "$out/figures" | tee "$out/compare.txt"
$iomodel compare "$out/model.json" --vc local vc1 vc2 vc3 vc4 \
  --profile "local=$out/replay/profile.parquet" --json > "$out/compare.json"
echo
echo "example: everything is in $out/ (trace, model.json, ior.sh, replay/, compare.txt, figures/)"
