#!/usr/bin/env bash
# The test command: set up (scripts/setup.sh), then run every test under real mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q tests "$@"
