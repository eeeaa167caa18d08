"""What a cluster description may make iomodel run (docs/security.md).

A cluster description names programs iomodel starts: the launcher (`mpirun`,
`mpiexec` or `srun`), its options, and IOR (`run.ior`). The launcher's
options can hand the launch to another program (a remote agent, a debugger,
an app file), load code into every process (an MCA component path,
LD_PRELOAD through the environment) or write files anywhere (`--report-pid
FILE`): a description someone sent you must not do that unseen. So the
options are read as the launcher reads them and checked against an
allow-list, one table per launcher family (replay/launchers/*.yaml): an
option passes when its table knows it safe and its values are of the kinds
the table says. Anything else is refused unless the user says they trust the
file (`--trust-cluster`)."""
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

TABLES = Path(__file__).with_name("launchers")
FAMILIES = ("openmpi", "mpich", "slurm")
SYNTAXES = ("orterun", "hydra", "getopt")
# kinds of value the code reads itself; every other kind is an expression of a table's `values`
_SPECIAL = {"flag", "parameter", "variable", "pair", "variables", "export"}
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class UntrustedCluster(ValueError):
    """A cluster description whose launcher options are not known safe."""


@dataclass(frozen=True)
class Table:
    launcher: str          # how messages name the launcher
    syntax: str            # how it reads its words: one of SYNTAXES
    options: dict          # spelling without dashes -> kind of value
    values: dict           # kind -> compiled expression a value must match whole
    parameters: object     # (allowed, refused, kind of value) of its parameters, or None


def _compile(expr):
    return re.compile(expr, re.ASCII)


@functools.lru_cache(maxsize=None)
def _common():
    """The kinds of value every table may use, and the environment variables
    (compiled name, kind) a launcher may pass to the processes."""
    doc = yaml.safe_load((TABLES / "common.yaml").read_text())
    unknown = set(doc["environment"].values()) - set(doc["values"]) - set(FAMILIES)
    if unknown:                        # a mistake in the table, not in the user's file
        raise RuntimeError(f"common.yaml: unknown kinds of value {sorted(unknown)}")
    return ({k: _compile(v) for k, v in doc["values"].items()},
            [(_compile(k), v) for k, v in doc["environment"].items()])


@functools.lru_cache(maxsize=None)
def table(family):
    """The allow-list of one launcher family (replay/launchers/FAMILY.yaml)."""
    doc = yaml.safe_load((TABLES / f"{family}.yaml").read_text())
    values = {**_common()[0], **{k: _compile(v) for k, v in (doc.get("values") or {}).items()}}
    options = {name: kind for names, kind in doc["options"].items() for name in names.split()}
    p = doc.get("parameters")
    params = (_compile(p["allowed"]), _compile(p["refused"]), p["value"]) if p else None
    kinds = {k.strip("[]") for k in options.values()} | ({params[2]} if params else set())
    unknown = kinds - _SPECIAL - set(values) | ({"parameter"} & kinds if params is None else set())
    if doc["syntax"] not in SYNTAXES or unknown:      # a mistake in the table, not in the user's file
        raise RuntimeError(f"{family}.yaml: unknown syntax, or kinds of value it does not define: "
                           f"{sorted(unknown)}")
    return Table(doc["launcher"], doc["syntax"], options, values, params)


def _option(t, word):
    """(kind, value attached to the word or None) of an option the table knows, else None."""
    if t.syntax == "getopt":
        if word.startswith("--"):      # --name, --name=value
            name, eq, value = word[2:].partition("=")
            kind = t.options.get(name) if len(name) > 1 else None
            return None if kind is None else (kind, value if eq else None)
        kind = t.options.get(word[1]) if len(word) >= 2 and word[0] == "-" else None
        if kind is None:
            return None
        rest = word[2:] or None        # -n4; but -lu is two flags, which the table does not list
        return None if rest is not None and kind == "flag" else (kind, rest)
    if not word.startswith("-"):
        return None
    name, attached = (word[2:] if word.startswith("--") else word[1:]), None
    if t.syntax == "hydra" and "=" in name:
        name, _, attached = name.partition("=")
    kind = t.options.get(name)
    return None if kind is None else (kind, attached)


def _taken(kind, first):
    """How many values an option of this kind takes, `first` its first one."""
    if kind == "flag" or kind.startswith("["):
        return 0
    if kind == "parameter":
        return 2
    if kind == "pair":                 # Hydra's -genv NAME=VALUE or -genv NAME VALUE
        return 1 if first is not None and "=" in first else 2
    return 1


def parameter_safe(t, name, value=None):
    """An MPI parameter (Open MPI's MCA parameter, MPICH's control variable)
    that table t allows, with a value of its kind (None: the user's own)."""
    allowed, refused, kind = t.parameters
    return bool(allowed.fullmatch(name)) and not refused.fullmatch(name) and \
        (value is None or bool(t.values[kind].fullmatch(value)))


def variable_safe(name, value=None):
    """An environment variable a launcher may set to `value` in the processes,
    or pass on from the user's environment (value None: any name, since the
    value is the user's own, as `-x LD_LIBRARY_PATH` on many clusters)."""
    if not _VARIABLE.fullmatch(name):
        return False
    if value is None:
        return True
    values, environment = _common()
    for expr, kind in environment:
        m = expr.fullmatch(name)
        if m:
            if kind in FAMILIES:
                return parameter_safe(table(kind), m.group(1), value)
            return value is None or bool(values[kind].fullmatch(value))
    return False


def _assignment_safe(word):
    name, eq, value = word.partition("=")
    return variable_safe(name, value if eq else None)


def _safe(t, kind, values):
    if kind == "flag":
        return not values
    if kind.startswith("["):
        return not values or bool(t.values[kind[1:-1]].fullmatch(values[0]))
    if kind == "parameter":
        return parameter_safe(t, *values)
    if kind in ("variable", "pair"):
        return _assignment_safe(values[0]) if len(values) == 1 else variable_safe(*values)
    if kind == "variables":
        return all(variable_safe(n) for n in values[0].split(","))
    if kind == "export":               # srun's ALL or NONE, then NAME or NAME=VALUE, by commas
        return all(w in ("ALL", "NONE") or _assignment_safe(w) for w in values[0].split(","))
    return bool(t.values[kind].fullmatch(values[0]))


def refused_options(options, family):
    """The launcher options (a list of words) that the family's table does not
    know safe, each as the words that make it up."""
    t = table(family)
    out, i = [], 0
    while i < len(options):
        found = _option(t, options[i])
        if found is None:              # shown with the words that seem to be its values
            j = i + 1
            while j < len(options) and not options[j].startswith("-"):
                j += 1
            out.append(" ".join(options[i:j]))
            i = j
            continue
        kind, attached = found
        given = [] if attached is None else [attached]
        first = attached if attached is not None else (options[i + 1] if i + 1 < len(options) else None)
        more = max(_taken(kind, first) - len(given), 0)
        values = given + options[i + 1:i + 1 + more]
        # a value missing at the end would be taken from the words iomodel adds (the program)
        if len(values) < len(given) + more or not _safe(t, kind, values):
            out.append(" ".join(options[i:i + 1 + more]))
        i += 1 + more
    return out


@functools.lru_cache(maxsize=None)
def _family_of_program(launcher):
    from iomodel import mpi
    return mpi.launcher_family(launcher)


def families(cluster):
    """The families whose tables apply to the cluster's launcher: srun's; else
    the MPI the description names (run.mpi, or the launcher's name), else the
    one the launcher's --version says; else both MPIs' (an option must then be
    safe for both)."""
    launcher = getattr(cluster, "launcher", None) or "mpirun"
    if os.path.basename(launcher) == "srun":
        return ("slurm",)
    family = getattr(cluster, "mpi", None) or _family_of_program(launcher)
    return (family,) if family else ("openmpi", "mpich")


def check_launcher_options(cluster):
    """Raise UntrustedCluster when the description's launcher options are not
    all known safe for its launcher, unless the user trusted it (cluster.trusted)."""
    options = list(getattr(cluster, "launcher_options", None) or [])
    if getattr(cluster, "trusted", False) or not options:
        return
    fams = families(cluster)
    bad = []
    for f in fams:
        bad += [b for b in refused_options(options, f) if b not in bad]
    if bad:
        where = getattr(cluster, "path", None) or getattr(cluster, "name", "the cluster description")
        who = table(fams[0]).launcher if len(fams) == 1 else \
            f"{getattr(cluster, 'launcher', 'mpirun')}, Open MPI's or MPICH's (run.mpi says which)"
        raise UntrustedCluster(
            f"{where}: run.launcher_options: {', '.join(repr(b) for b in bad)} not known safe for "
            f"{who} (iomodel passes on only options it knows start no program, load no library and "
            f"write no file); if you trust this file as you would a shell script, give "
            f"--trust-cluster (docs/security.md)")
