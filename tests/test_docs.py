"""The README and docs as a user reads them: every `iomodel` option they show
exists, every option of every subcommand is documented on its page, the
README's worked example runs as written and prints what the README shows
(its timing-free parts), and its other commands and cluster file work."""
import re
import shlex
import subprocess
import sys
from functools import lru_cache

import pytest
import yaml
from conftest import IOMODEL, ROOT

SUBCOMMANDS = ["trace", "trace-info", "analyze", "show", "plot", "predict", "compare",
               "ior", "replay", "characterize", "extrapolate"]
PAGE = {"trace": "trace.md", "trace-info": "trace-info.md", "analyze": "analyze.md",
        "show": "show.md", "plot": "show.md", "predict": "predict.md", "compare": "compare.md",
        "ior": "ior.md", "replay": "replay.md", "characterize": "characterize.md",
        "extrapolate": "extrapolate.md"}
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
OPTION = re.compile(r"(?<![\w./-])(--?[A-Za-z][\w-]*)")


@lru_cache(maxsize=None)
def help_text(sub):
    return subprocess.run(IOMODEL + [sub, "--help"], capture_output=True, text=True, cwd=ROOT).stdout


def help_options(sub):
    return set(OPTION.findall(help_text(sub)))


def help_groups(sub):
    """Each option of the help as the set of its names (`-o`, `--output`)."""
    groups = []
    for line in help_text(sub).split("options:", 1)[1].splitlines():
        m = re.match(r"\s{2}(-[^ ].*?)(?:\s{2,}|$)", line)
        if m:
            groups.append({o for o in OPTION.findall(m.group(1))})
    return groups


def code_lines(text):
    """The lines of a page's code blocks (fenced or indented by four spaces),
    a synopsis's continuation lines joined to the line they continue."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            if out and re.match(r"\s{8,}\[", line):
                out[-1] += " " + line.strip()
            else:
                out.append(line.strip())
    return out


def shown_commands():
    """(page, subcommand, options) of every `iomodel SUB ...` a page shows."""
    found = []
    for page in DOCS:
        for line in code_lines(page.read_text()):
            m = re.match(r"(?:\$ )?(?:\.venv/bin/)?iomodel ([a-z-]+)\b(.*)", line)
            if not m or m.group(1) not in SUBCOMMANDS:
                continue
            rest = m.group(2).split(" -- ")[0].split(" #")[0]   # not the traced command, not a comment
            found.append((page.relative_to(ROOT), m.group(1), OPTION.findall(rest)))
    return found


def test_the_docs_show_commands():
    pages = {str(p) for p, _, _ in shown_commands()}
    assert "README.md" in pages and len(pages) >= 8


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_every_option_shown_exists(sub):
    unknown = [f"{page}: {opt}" for page, s, opts in shown_commands() if s == sub
               for opt in opts if opt not in help_options(sub)]
    assert not unknown, f"options shown for `iomodel {sub}` that its --help does not have: {unknown}"


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_every_option_is_documented_on_its_page(sub):
    page = (ROOT / "docs" / "commands" / PAGE[sub]).read_text()
    missing = sorted("/".join(sorted(g)) for g in help_groups(sub) if not g & {"-h", "--help"} and
                     not any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", page) for o in g))
    assert not missing, f"docs/commands/{PAGE[sub]} does not mention {missing}"


def test_every_link_between_pages_resolves():
    bad = []
    for page in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not re.match(r"[a-z]+:", target) and not (page.parent / target).exists():
                bad.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not bad


# ------------------------------------------------------ the README's commands

def readme():
    return (ROOT / "README.md").read_text()


def example_block(key):
    """The README's worked-example block KEY as [(command, [output lines])]."""
    text = readme().split(f"<!-- example:{key} -->", 1)[1].split(f"<!-- /example:{key} -->", 1)[0]
    steps = []
    for line in text.splitlines():
        line = line[4:] if line.startswith("    ") else line
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    assert steps, f"the README's example:{key} block shows no command"
    return steps


def run_shown(command, cwd):
    """A command as the README shows it, run in `cwd` with this checkout's iomodel."""
    argv = shlex.split(command)
    if argv[0] == ".venv/bin/iomodel":
        argv = IOMODEL + argv[1:]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    return (proc.stdout + proc.stderr).splitlines()


def exact_part(lines, key):
    """The lines of an output that do not depend on timing: trace-info's counts and
    bytes, the model's phase table, the paper's clusters in the comparison."""
    keep = {"trace-info": r"(ranks|written|read) ",
            "analyze": r"\s*(IdPh|\d+( to \d+)?) ",
            "compare": r"(vc\d|VC|best first|  by (cost|perf))"}[key]
    out = [l.rstrip() for l in lines if re.match(keep, l)]
    if key == "trace-info":  # the host's name is this machine's
        out = [re.sub(r"host\(s\): .*", "host(s)", l) for l in out]
    return out


def test_readme_worked_example_runs_as_shown(build_dir, tmp_path):
    """Every command of the README's worked example, in order, as written (the
    example program built where scripts/example.sh puts it): each exits 0, and
    the parts of its output that do not depend on timing are the README's."""
    work = tmp_path / "out" / "example"
    (work / "data").mkdir(parents=True)
    (work / "btio_like").symlink_to(build_dir / "btio_like")
    checked = 0
    for key in ("trace", "analyze", "compare"):
        for command, shown in example_block(key):
            got = run_shown(command, tmp_path)
            sub = shlex.split(command)[1]
            if sub in ("trace-info", "analyze", "compare"):
                want = exact_part([l for l in shown if l != "..."], sub)
                assert want, f"the README shows nothing exact of `{command}`"
                assert exact_part(got, sub) == want, command
                checked += 1
    assert checked == 3


def test_readme_cluster_file_loads_and_gives_ior_commands(tmp_path):
    """The README's cluster description is valid as shown, and `iomodel ior` with it
    launches through srun --mpi=pmix in its work directory."""
    text = readme().split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "mycluster.yaml"
    path.write_text(text)
    from iomodel.cluster.description import load_cluster
    c = load_cluster(str(path))
    assert (c.name, c.cores_total, c.price_per_hour, c.billing) == ("mycluster", 32, 0.34, "second")
    assert (c.launcher, c.launcher_options, c.workdir) == ("srun", ["--mpi=pmix"], "/shared/scratch/iomodel")
    out = "\n".join(run_shown(f"{sys.executable} -m iomodel ior models/examples/btio-C-16.json "
                              f"--vc {path}", ROOT))
    assert "srun --mpi=pmix" in out and "/shared/scratch/iomodel" in out


def test_readme_paper_model_command_runs():
    line = next(l.strip() for l in readme().splitlines() if "iomodel show models/examples/" in l)
    command = re.search(r"`(\.venv/bin/iomodel show [^`]+)`", line).group(1)
    out = run_shown(command, ROOT)
    assert any(l.lstrip().startswith("IdPh") for l in out)


def test_readme_is_short():
    assert len(readme().splitlines()) <= 220    # about 200 lines: the text and the benchmarks' tables
    assert not re.search(r"\b[Rr]uns? \d+\b", readme()), "the README names a benchmark run"


def test_shipped_yaml_blocks_in_cluster_format_parse():
    for block in re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "cluster-format.md").read_text(), re.S):
        assert isinstance(yaml.safe_load(block), dict)
