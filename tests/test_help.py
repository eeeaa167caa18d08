"""`--help` of every iomodel subcommand and every bench script prints its usage:
argparse formats help strings only when asked, so a stray `%` in one stays
hidden until a user asks for help (bench/accuracy.py's --steal-retries did)."""
import re
import subprocess
import sys

import pytest
from conftest import IOMODEL, ROOT

SUBCOMMANDS = ["trace", "trace-info", "analyze", "extrapolate", "show", "plot", "predict", "compare",
               "ior", "replay", "characterize"]
BENCH_SCRIPTS = sorted(p.name for p in (ROOT / "bench").glob("*.py")
                       if "__main__" in p.read_text())


def help_of(cmd):
    proc = subprocess.run(cmd + ["--help"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: "), proc.stdout[:200]
    assert "%(" not in proc.stdout
    return proc.stdout


def test_the_subcommand_list_is_the_one_tested():
    listed = re.findall(r"^    ([a-z][a-z-]*)\b", help_of(IOMODEL), re.M)
    assert listed == SUBCOMMANDS


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_subcommand_help(name):
    assert help_of(IOMODEL + [name]).startswith(f"usage: iomodel {name} ")


def test_every_bench_script_is_tested():
    assert {"accuracy.py", "analyzer_bench.py", "tracer_bench.py"} <= set(BENCH_SCRIPTS)


@pytest.mark.parametrize("name", BENCH_SCRIPTS)
def test_bench_script_help(name):
    out = help_of([sys.executable, str(ROOT / "bench" / name)])
    if name == "accuracy.py":
        assert "lost 5% of its wall" in " ".join(out.split())
