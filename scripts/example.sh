#!/usr/bin/env bash
# The main command: set up, then trace the built-in example (examples/btio_like.c,
# a BT-IO-like program) under mpirun, summarize its trace and build its I/O
# model.  Output: out/example/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=out/example
mkdir -p "$out/data"
mpicc -O2 -Wall -Wextra -o "$out/btio_like" examples/btio_like.c
mpi=(mpirun --oversubscribe -np 4)
[[ $(id -u) == 0 ]] && mpi+=(--allow-run-as-root)
# 4 ranks, a 32x32x32 grid of 5-double cells, 40 time steps (as NAS BT-IO)
.venv/bin/iomodel trace -o "$out/trace" -- "${mpi[@]}" "$out/btio_like" "$out/data" 32 32 32 40
.venv/bin/iomodel trace-info "$out/trace" --parquet "$out/tables" | tee "$out/trace-info.txt"
.venv/bin/iomodel trace-info "$out/trace" --events > "$out/events.txt"
echo
.venv/bin/iomodel analyze "$out/trace" -o "$out/model.json"
if .venv/bin/python -c 'import matplotlib' 2>/dev/null; then
  .venv/bin/iomodel plot "$out/model.json" -o "$out/model.png"
fi
echo "example: trace in $out/trace, tables in $out/tables, every event in $out/events.txt, model in $out/model.json"
