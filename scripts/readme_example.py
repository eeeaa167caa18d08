#!/usr/bin/env python3
"""Put the worked example's real commands and output into the README.

    bash scripts/example.sh && .venv/bin/python scripts/readme_example.py

scripts/example.sh keeps each step's command and output as out/example/NAME.cmd
and NAME.txt; this fills the README's <!-- example:KEY --> blocks from them:
the command as a user types it (`.venv/bin/iomodel`, without the root-only
`--allow-run-as-root`), then its output, cut to the lines each block shows.
tests/test_docs.py runs the commands again and checks the outputs' exact parts.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "example"


def whole(lines):
    """The output as printed, but for the lines that name the files written."""
    return [l for l in lines if not l.startswith(("iomodel: figures in", "iomodel: tables written"))]


def summary_head(lines):
    """trace-info: the summary lines above the file and routine tables."""
    lines = whole(lines)
    head = lines[:lines.index("")] if "" in lines else lines
    return [l for l in head if l.split(" ", 1)[0] in ("ranks", "events", "written", "read")] + ["..."]


def phase_table(lines):
    """analyze: the phase table (its header to the first blank line after it)."""
    i = next(i for i, l in enumerate(lines) if l.lstrip().startswith("IdPh"))
    j = next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines))
    return ["..."] + lines[i:j]


def progress(lines):
    """replay: its progress lines, one per run."""
    return [l for l in lines if l.startswith("[")] + ["..."]


# README block -> the steps it shows, each with the part of its output kept
BLOCKS = {
    "trace": [("trace", whole), ("trace-info", summary_head)],
    "analyze": [("model", phase_table)],
    "compare": [("replay", progress), ("compare", whole)],
}


def shown_command(name):
    words = (OUT / f"{name}.cmd").read_text().split()
    words = [w for w in words if w != "--allow-run-as-root"]
    return "$ " + " ".join(words)


def block(steps):
    out = []
    for name, cut in steps:
        lines = (OUT / f"{name}.txt").read_text().rstrip("\n").splitlines()
        out += [shown_command(name)] + cut(lines)
    return "\n".join("    " + l if l else "" for l in out)


def main():
    missing = [n for steps in BLOCKS.values() for n, _ in steps if not (OUT / f"{n}.txt").is_file()]
    if missing:
        sys.exit(f"readme_example: no output of {', '.join(missing)} in {OUT}: run scripts/example.sh first")
    readme = ROOT / "README.md"
    s = readme.read_text()
    for key, steps in BLOCKS.items():
        start, end = f"<!-- example:{key} -->", f"<!-- /example:{key} -->"
        if start not in s or end not in s:
            sys.exit(f"readme_example: {readme}: no {start} ... {end} markers")
        head, rest = s.split(start, 1)
        s = f"{head}{start}\n{block(steps)}\n{end}{rest.split(end, 1)[1]}"
    readme.write_text(s)
    print(f"readme_example: {', '.join(BLOCKS)} written into {readme}")


if __name__ == "__main__":
    main()
