#!/usr/bin/env bash
# The test command: set up (scripts/setup.sh), install what the testbed tests
# need (Slurm and munge, as root), then run every test under real mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
missing=()
command -v slurmctld >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]]; then
    echo "test: installing ${missing[*]} with apt-get (the testbed's Slurm)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "test: missing ${missing[*]} (the testbed tests start Slurm as root); install them as root" >&2
    exit 1
  fi
fi
exec .venv/bin/python -m pytest -q tests "$@"
