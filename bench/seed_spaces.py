#!/usr/bin/env python3
"""Composed against published: seed 000's RAID 0 figures (cc2.8xlarge, 1, 2
and 4 ephemeral or EBS disks; cluster/shipped/spaces/ec2-cc2.yaml).  Each
configuration the paper measured is composed two ways and compared with the
paper's figure:

- fitted: from the space's measured 1- and 4-disk configurations (the
  design's low and high runs), the 2-disk one composed (cluster/compose.py);
- components only: from the 1-disk figure alone, scaled by the disks' own
  rates (nothing fitted: what a user who measured one configuration gets).

Writes bench/results/seed-spaces.json and the table between
docs/composition.md's <!-- bench:seed-spaces --> markers.

usage: .venv/bin/python bench/seed_spaces.py
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from doc_blocks import put_block  # noqa: E402

from iomodel.cluster.compose import compose_space  # noqa: E402
from iomodel.cluster.space import load_space  # noqa: E402
from iomodel.cluster.space_compare import measured_profiles  # noqa: E402

SPACE = ROOT / "cluster" / "shipped" / "spaces" / "ec2-cc2.yaml"
RESULTS = ROOT / "bench" / "results" / "seed-spaces.json"
# the paper's figures (MiB/s) for every configuration, by its lines in the seed's text
PAPER = {("ephemeral-2dev", "write"): (172, "l.115"), ("ephemeral-2dev", "read"): (200, "l.103: around 200"),
         ("ebs-2dev", "write"): (83.7, "l.113"), ("ebs-2dev", "read"): (209, "l.113"),
         ("ephemeral-4dev", "write"): (334, "l.115"), ("ephemeral-4dev", "read"): (358, "l.113"),
         ("ebs-4dev", "write"): (101.3, "l.115"), ("ebs-4dev", "read"): (333, "l.113")}


def bandwidths(profile):
    t = profile.table
    return {op: bw / (1 << 20) for op, bw in zip(t.column("operation").to_pylist(),
                                                t.column("bandwidth_Bps").to_pylist())}


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    space = load_space(SPACE)
    measured = measured_profiles(space)
    fitted = compose_space(space, measured)
    one = {n: p for n, p in measured.items() if n.endswith("-1dev")}
    alone = compose_space(space, one)
    rows = []
    for (point, op), (paper, where) in PAPER.items():
        f = fitted[point]
        row = {"config": point, "operation": op, "paper_MiBps": paper, "paper_where": where,
               "components_only_MiBps": round(bandwidths(alone[point][0])[op], 1),
               "fitted_MiBps": (round(bandwidths(f[0])[op], 1) if f[1]["profile"] == "composed" else None)}
        rows.append(row)
    RESULTS.write_text(json.dumps({"space": str(SPACE.relative_to(ROOT)), "rows": rows}, indent=1) + "\n")
    lines = ["| configuration | operation | paper (MiB/s) | fitted from 1 and 4 disks | components only, from 1 disk |",
             "|---|---|---|---|---|"]
    for r in rows:
        fit = "measured" if r["fitted_MiBps"] is None else \
            f"{r['fitted_MiBps']:g} ({100 * (r['fitted_MiBps'] / r['paper_MiBps'] - 1):+.0f}%)"
        lines.append(f"| {r['config']} | {r['operation']} | {r['paper_MiBps']:g} ({r['paper_where']}) | {fit} | "
                     f"{r['components_only_MiBps']:g} "
                     f"({100 * (r['components_only_MiBps'] / r['paper_MiBps'] - 1):+.0f}%) |")
    table = "\n".join(lines)
    print(table)
    put_block("seed-spaces", table, page="docs/composition.md")


if __name__ == "__main__":
    main()
