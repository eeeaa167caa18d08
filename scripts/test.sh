#!/usr/bin/env bash
# The test command: set up (scripts/setup.sh), install what the testbed tests
# need (Slurm, munge, GlusterFS; as root), then run every test under real mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
missing=()
command -v slurmctld >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)
command -v glusterd >/dev/null || missing+=(glusterfs-server)
command -v mount.glusterfs >/dev/null || missing+=(glusterfs-client)
command -v pkg-config >/dev/null || missing+=(pkg-config)
pkg-config --exists fuse3 2>/dev/null || missing+=(libfuse3-dev)
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]]; then
    echo "test: installing ${missing[*]} with apt-get (the testbed's Slurm, GlusterFS and throttled disk)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "test: missing ${missing[*]} (the testbed tests start Slurm, GlusterFS and a FUSE-throttled disk as root); install them as root" >&2
    exit 1
  fi
fi
exec .venv/bin/python -m pytest -q tests "$@"
