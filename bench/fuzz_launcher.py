"""Cluster files whose launcher, MPI and launcher options are random, and
which of them `iomodel ior --vc` must refuse (docs/security.md, "The launcher
options: an allow-list").

`run.launcher_options` is a sequence of units, each an option as its
launcher reads it with all its values, drawn from real option words of the
three families: options the tables (replay/launchers/*.yaml) list, with
values of their kind ("safe"); options the security page names as running a
program, loading code or writing a file, and allowed options with a value
outside their kind ("dangerous"); and words that are no option (a program to
run, `:`, a shell word) or an option cut from its value at the end ("junk").
The oracle is the units' labels, not the code under test: an input that `ior`
accepts while it holds a dangerous unit of the family its launcher resolves
to, or a junk one, is a bypass. A unit of another family makes no claim (its
launcher reads it its own way), nor does a word right after one: it may be
that unit's value there.
"""
import functools
import os
import shlex

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLES = os.path.join(ROOT, "replay", "launchers")
LAUNCHERS = ["mpirun", "mpiexec", "srun", "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich", "mpiexec.mpich",
             "mpiexec.hydra"]
BAD_LAUNCHERS = ["/usr/bin/mpirun", "sh", "mpirun; id", "", "orterun", "mpirun ", "SRUN", "/tmp/srun"]
MPIS = [None, None, None, "openmpi", "mpich", "openmpi", "mpich", "OpenMPI", "slurm", "", 7]

# values an option of a kind may take (common.yaml's kinds and the tables' own)
SAFE_VALUES = {
    "count": ["1", "4", "16", "0"], "range": ["2", "1-4"], "size": ["4G", "1024", "512M"],
    "duration": ["10", "1:00:00", "UNLIMITED", "0-12"], "cpus": ["0-3", "0,1", "1"],
    "hosts": ["node1,node2", "n[01-16]", "h1:4", "localhost"], "name": ["debug", "eth0", "ib0,ib1"],
    "constraint": ["ib&haswell", "skylake|icelake"], "policy": ["core", "ppr:2:socket", "block:cyclic", "pmix"],
    "setting": ["self,vader", "1", "10.0.0.0/8", "tcp", "0"], "text": ["my job", "fuzz"], "stdio": ["-", "+"],
    "file": ["hosts.txt", "/etc/hosts", "nodes"], "bootstrap": ["ssh", "slurm", "fork", "rsh"],
    "exclusive": ["user", "mcs"],
}
# values outside each kind: a path, a shell word, a file to write
BAD_VALUES = {
    "stdio": ["/tmp/pid", "out.txt"], "setting": ["/tmp/x", "$(id)", "a`id`", "../lib"],
    "hosts": ["/tmp/hosts", "./nodes"], "policy": ["/tmp/x", "core id", "$(id)"], "name": ["a/b", "$(id)"],
    "count": ["-1", "4x", "/tmp"], "bootstrap": ["manual", "/tmp/ssh", "persist"], "cpus": ["a"],
    "text": ["a\nb"], "file": ["a\nb"],
}
PARAMETERS = {   # MCA parameters and MPICH control variables: allowed, and those of a file or a tool
    "openmpi": (["btl", "btl_tcp_if_include", "pml", "io", "fcoll", "coll_tuned_use_dynamic_rules",
                 "mpi_yield_when_idle", "osc", "rmaps_base_oversubscribe", "hwloc_base_binding_policy"],
                ["mca_base_component_path", "plm_rsh_agent", "orte_base_user_debugger", "mca_base_param_files",
                 "btl_vader_backing_directory", "coll_tuned_dynamic_rules_filename", "mpi_show_mca_params_file",
                 "pml_v_output", "plm_rsh_args", "orte_launch_agent"]),
    "mpich": (["ASYNC_PROGRESS", "CH3_NOLOCAL", "ENABLE_HCOLL", "ALLREDUCE_INTRA_ALGORITHM"],
              ["DEBUG_HOLD", "QMPI_TOOL_LIST", "NAMESERV_FILE_PUBDIR", "COLL_SELECTION_TUNING_JSON_FILE"]),
}
# environment variables set to a value: allowed ones, and ones that choose code or a path
SAFE_ENV = ["OMP_NUM_THREADS=4", "UCX_TLS=rc,sm", "FI_PROVIDER=tcp", "OMPI_MCA_btl=self,vader",
            "MPIR_CVAR_ASYNC_PROGRESS=1", "IOR_HINT__MPI__striping_factor=16", "ROMIO_FSTYPE_FORCE=ufs:",
            "OMPI_ALLOW_RUN_AS_ROOT=1"]
BAD_ENV = ["LD_PRELOAD=/tmp/x.so", "LD_LIBRARY_PATH=/tmp", "PATH=/tmp", "PYTHONPATH=/tmp",
           "OMPI_MCA_mca_base_component_path=/tmp/x", "OMPI_MCA_plm_rsh_agent=/tmp/x.sh", "HOME=/tmp",
           "FI_PROVIDER_PATH=/tmp", "UCX_MODULE_DIR=/tmp", "PMIX_MCA_x=1", "HYDRA_LAUNCHER_EXEC=/tmp/x",
           "MPIR_CVAR_QMPI_TOOL_LIST=x", "OMP_NUM_THREADS=$(id)", "UCX_HANDLE_ERRORS=debug"]
PASSED_ON = ["LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "HOME", "OMP_NUM_THREADS"]   # by name: the user's own

DANGEROUS = {
    "openmpi": [["--debug"], ["-tv"], ["--debugger", "./x.sh"], ["--app", "app.txt"], ["--launch-agent", "/tmp/x"],
                ["--prefix", "/tmp/x"], ["-am", "x.conf"], ["--tune", "x.conf"], ["--preload-files", "x"],
                ["--preload-binary"], ["--xterm", "0"], ["--output-filename", "out"], ["--xml-file", "x"],
                ["--wdir", "/tmp"], ["-wdir", "/tmp"], ["--path", "/tmp"], ["--report-pid", "/tmp/pid"],
                ["--report-uri", "uri.txt"], ["-report-pid", "p"], ["--set-cwd-to-session-dir"],
                ["--enable-recovery"], ["--personality", "x"], ["--ompi-server", "file:/tmp/x"],
                ["--output-proctable"], ["--merge-stderr-to-stdout", "x"]],
    "mpich": [["-launcher-exec", "/tmp/x"], ["-bootstrap-exec", "/tmp/x"], ["-launcher-exec=/tmp/x"],
              ["-configfile", "x"], ["-launcher", "manual"], ["-bootstrap", "persist"], ["-wdir", "/tmp"],
              ["-outfile-pattern", "x"], ["-errfile-pattern", "x"], ["-gdb"], ["-gdba", "1"],
              ["-iface", "a/b"], ["-genv", "LD_PRELOAD", "/tmp/x.so"], ["-env", "PATH", "/tmp"],
              ["-genvlist", "A,B/C"], ["-f", "a\nb"]],
    "slurm": [["--prolog", "/tmp/x"], ["--prolog=/tmp/x"], ["--epilog=x"], ["--task-prolog", "x"],
              ["--task-epilog=x"], ["--bcast=/tmp/x"], ["--send-libs"], ["--multi-prog"], ["--container", "/tmp/c"],
              ["--output", "/tmp/o"], ["-o", "/tmp/o"], ["-e", "x"], ["-i", "x"], ["--error=x"], ["--chdir", "/tmp"],
              ["-D", "/tmp"], ["--export=LD_PRELOAD=/tmp/x.so"], ["--export=ALL,PATH=/tmp"], ["--prol=/tmp/x"],
              ["--epi", "/tmp/x"], ["-w", "/tmp/hosts"], ["--nodelist=./h"], ["--export", "ALL,LD_PRELOAD=x"],
              ["--propagate=ALL"], ["-Z"]],
}
JUNK = [["./evil.sh"], [":"], ["a.out"], ["$(touch /tmp/pwned)"], ["--"], [""], ["-"], ["-lu"], ["--x=1"],
        ["-np4x"], ["--ntasks=4", "a.out"], ["-la"], ["ior"], ["/bin/sh", "-c", "id"]]


@functools.lru_cache(maxsize=None)
def tables():
    """{family: (syntax, {option: kind})} from replay/launchers/*.yaml."""
    out = {}
    for fam in ("openmpi", "mpich", "slurm"):
        with open(os.path.join(TABLES, f"{fam}.yaml")) as f:
            doc = yaml.safe_load(f)
        out[fam] = (doc["syntax"], {n: k for names, k in doc["options"].items() for n in names.split()})
    return out


def _spell(syntax, name, values, rnd):
    """The words of option `name` with its values, as its launcher may read them."""
    dashes = "-" if len(name) == 1 else ("--" if syntax == "getopt" else rnd.choice(("-", "--")))
    if values and syntax in ("getopt", "hydra") and len(values) == 1 and rnd.random() < 0.4:
        return [f"{dashes}{name}{'' if len(name) == 1 and syntax == 'getopt' else '='}{values[0]}"]
    return [f"{dashes}{name}", *values]


def _values(fam, kind, rnd, good):
    """Values for an option of this kind: good (known safe) or not."""
    if kind == "flag":
        return []
    if kind.startswith("["):
        return []                               # an optional value: only ever attached (below)
    if kind == "parameter":
        ok, bad = PARAMETERS[fam]
        if good:
            return [rnd.choice(ok), rnd.choice(SAFE_VALUES["setting"])]
        return rnd.choice(([rnd.choice(bad), "x"], [rnd.choice(ok), rnd.choice(BAD_VALUES["setting"])]))
    if kind in ("variable", "pair"):
        if good:        # -x NAME passes on the user's own; Hydra's -genv NAME takes a value too
            words = rnd.choice(SAFE_ENV + (PASSED_ON if kind == "variable" else []))
        else:
            words = rnd.choice(BAD_ENV)
        if kind == "pair" and "=" in words and rnd.random() < 0.5:
            return words.split("=", 1)
        return [words]
    if kind == "variables":
        return [",".join(rnd.sample(PASSED_ON, 2))] if good else [rnd.choice(("A,B/C", "A=1", "$(id)"))]
    if kind == "export":
        if good:
            return [rnd.choice(("ALL", "NONE", "ALL,OMP_NUM_THREADS=4", "LD_LIBRARY_PATH", "ALL,UCX_TLS=rc"))]
        return [rnd.choice(("ALL,LD_PRELOAD=/tmp/x.so", "PATH=/tmp", "ALL,HOME=/x"))]
    return [rnd.choice((SAFE_VALUES if good else BAD_VALUES)[kind])]


def unit(rnd, fam, last):
    """One option of family `fam` with its values: (words, label), the label
    "safe", "dangerous" or, last in the list, "cut" (its value missing: the
    launcher would take the program iomodel puts after it)."""
    syntax, options = tables()[fam]
    r = rnd.random()
    if r < 0.2:
        return list(rnd.choice(DANGEROUS[fam])), "dangerous"
    name = rnd.choice(sorted(options))
    kind = options[name]
    if kind.startswith("["):                    # srun's --exclusive[=user], -K[1]
        words = [f"--{name}" if len(name) > 1 else f"-{name}"]
        if rnd.random() < 0.5:
            words[0] += ("=" if len(name) > 1 else "") + rnd.choice(SAFE_VALUES.get(kind[1:-1], ["1"]))
        return words, "safe"
    good = r >= 0.35 or kind == "flag" or kind not in BAD_VALUES and kind not in (
        "parameter", "variable", "pair", "variables", "export")
    words = _spell(syntax, name, _values(fam, kind, rnd, good), rnd)
    if r < 0.42 and len(words) > 1 and last:
        return words[:1], "cut"                 # an option whose value is missing
    return words, "safe" if good else "dangerous"


def family_of(launcher, mpi):
    """The families whose rules apply (docs/security.md, "Which family"): srun's;
    else the one run.mpi or the launcher's name says; else the installed
    launcher's (its --version); else both MPIs'."""
    if launcher == "srun":
        return {"slurm"}
    if mpi in ("openmpi", "mpich"):
        return {mpi}
    if launcher.endswith(".openmpi"):
        return {"openmpi"}
    if launcher.endswith((".mpich", ".hydra")):
        return {"mpich"}
    return {_installed(launcher)} - {None} or {"openmpi", "mpich"}


@functools.lru_cache(maxsize=None)
def _installed(launcher):
    from iomodel import mpi
    return mpi.launcher_family(launcher)


def mutate_launcher(text, rnd):
    """(cluster file's bytes, whether an input `ior` accepts is a bypass, the
    run section as drawn) for one input."""
    doc = yaml.safe_load(text)
    run = doc.setdefault("run", {}) or {}
    doc["run"] = run
    launcher = rnd.choice(LAUNCHERS * 4 + BAD_LAUNCHERS)
    mpi = rnd.choice(MPIS)
    run["launcher"] = launcher
    if mpi is None and rnd.random() < 0.5:
        run.pop("mpi", None)
    else:
        run["mpi"] = mpi
    # as the loader reads them: without spaces around, in any case
    known = {x: x for x in LAUNCHERS + ["openmpi", "mpich"]}
    lname = known.get(launcher.strip().lower()) if launcher.strip() else None
    mname = known.get(mpi.strip().lower(), "?") if isinstance(mpi, str) and mpi.strip() else \
        None if mpi is None else "?"
    fams = family_of(lname, mname) if lname in LAUNCHERS and mname in (None, "openmpi", "mpich") else set()
    words, unsafe, after_foreign = [], False, False
    n = rnd.choice((0, 1, 1, 2, 3, 5, 8))
    for i in range(n):
        r = rnd.random()
        if r < 0.12:
            w, label = list(rnd.choice(JUNK)), "junk"
        else:
            fam = rnd.choice(sorted(fams)) if fams and r < 0.75 else rnd.choice(("openmpi", "mpich", "slurm"))
            w, label = unit(rnd, fam, i == n - 1)
            if fam not in fams or len(fams) > 1 and label == "safe":
                label = "foreign"               # read its own way by this launcher: no claim
        if label in ("junk", "dangerous", "cut") and not after_foreign:
            unsafe = True
        after_foreign = label == "foreign"
        words += w
    run["launcher_options"] = shlex.join(words) if words and rnd.random() < 0.15 else words
    return yaml.safe_dump(doc, allow_unicode=True).encode(), unsafe, {
        "launcher": launcher, "mpi": mpi, "launcher_options": words}
