#!/usr/bin/env bash
# The main command: set up, then run the whole method on the built-in example
# (examples/btio_like.c, a program that does its I/O as NAS BT-IO does):
#   1. trace it under mpirun                    -> out/example/trace/
#   2. build its I/O model                      -> out/example/model.json (+ model.png)
#   3. replay the model on this machine (local.yaml) with the built-in replayer
#                                               -> out/example/replay/
#   4. predict and compare this machine with the paper's four virtual clusters
#                                               -> out/example/compare.txt, figures/
# Each step's command and output are kept as out/example/NAME.cmd and NAME.txt
# (scripts/readme_example.py puts them into the README's worked example).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=out/example
mkdir -p "$out/data"
mpicc -O2 -Wall -Wextra -o "$out/btio_like" examples/btio_like.c
mpi=(mpirun --oversubscribe -np 4)
[[ $(id -u) == 0 ]] && mpi+=(--allow-run-as-root)
iomodel=.venv/bin/iomodel

# step NAME COMMAND...: run it, its output (stdout and stderr) shown and kept
step() {
  local name=$1; shift
  echo "$*" > "$out/$name.cmd"
  "$@" 2>&1 | tee "$out/$name.txt"
}

echo "== 1. trace: 4 ranks, a 32x32x32 grid of 5-double cells, 40 time steps"
step trace $iomodel trace -o "$out/trace" -- "${mpi[@]}" "$out/btio_like" "$out/data" 32 32 32 40
step trace-info $iomodel trace-info "$out/trace" --parquet "$out/tables"
$iomodel trace-info "$out/trace" --events > "$out/events.txt"

echo; echo "== 2. model"
step model $iomodel analyze "$out/trace" -o "$out/model.json"
if .venv/bin/python -c 'import matplotlib' 2>/dev/null; then
  $iomodel plot "$out/model.json" -o "$out/model.png"
fi
$iomodel ior "$out/model.json" --vc local > "$out/ior.sh"

echo; echo "== 3. replay on this machine (local.yaml, built-in replayer)"
rm -rf "$out/replay"            # a fresh replay each time (replay resumes from what it finds)
step replay $iomodel replay "$out/model.json" --vc local --backend builtin -o "$out/replay"

echo; echo "== 4. predict and compare: this machine and the paper's virtual clusters 1 to 4"
$iomodel predict "$out/model.json" --vc local --replay "$out/replay" > "$out/predict-local.txt"
step compare $iomodel compare "$out/model.json" --vc local vc1 vc2 vc3 vc4 \
  --profile "local=$out/replay/profile.parquet" --plot "$out/figures"
$iomodel compare "$out/model.json" --vc local vc1 vc2 vc3 vc4 \
  --profile "local=$out/replay/profile.parquet" --json > "$out/compare.json"
echo
echo "example: everything is in $out/ (trace, model.json, ior.sh, replay/, compare.txt, figures/)"
