"""The launcher options a cluster description may pass without --trust-cluster
(replay/trust.py, its tables replay/launchers/*.yaml, docs/security.md). Each
bypass of issue 78 is refused in one line naming the file, the field and the
option, before anything runs; the variables a launcher passes on follow the
rules of the options they stand for; what a user of each launcher writes for a
real cluster passes; every option of the tables is one the installed launcher
takes as the table says; and --trust-cluster lets a refused one through, for
real: a replay whose launcher options load a library into every process."""
import json
import os
import shlex
import subprocess

import pytest
from conftest import ROOT
from test_hostile import cluster_file, refused, run, small_model  # noqa: F401  (a fixture)

from iomodel.replay import trust

MODEL = ROOT / "models" / "examples" / "btio-B-4.json"
OPENMPI = "Open MPI's mpirun"


def message(vc, shown, who=OPENMPI):
    return (f"{vc}: run.launcher_options: {shown} not known safe for {who} (iomodel passes on only "
            "options it knows start no program, load no library and write no file); if you trust this "
            "file as you would a shell script, give --trust-cluster (docs/security.md)")


@pytest.fixture
def bait(tmp_path):
    """What the attacks name: AGENT, a script that leaves RAN if it ever runs;
    APP, an app file that starts it; DIR, a directory of code; OUT, a file
    outside the work directory."""
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\ntouch {tmp_path / 'RAN'}\n")
    agent.chmod(0o755)
    app = tmp_path / "app.txt"
    app.write_text(f"-np 1 {agent}\n")
    (tmp_path / "dir").mkdir()
    return {"AGENT": str(agent), "APP": str(app), "DIR": str(tmp_path / "dir"), "OUT": str(tmp_path / "out")}


def filled(words, names):
    for k, v in names.items():
        words = words.replace(k, v)
    return words


# -------------------------------------------------------------- the bypasses of issue 78, item 2

@pytest.mark.parametrize("options, shown", [
    # a debugger, named by the option or by the MCA parameter --debug (-tv) reads
    ("--debug --debugger AGENT", "'--debug', '--debugger AGENT'"),
    ("--mca orte_base_user_debugger AGENT --debug", "'--mca orte_base_user_debugger AGENT', '--debug'"),
    ("--mca orte_base_user_debugger AGENT -tv", "'--mca orte_base_user_debugger AGENT', '-tv'"),
    # an app file, whose lines are launches of their own
    ("--app APP", "'--app APP'"),
    # the directories MCA components are loaded from, as an option and as a variable
    ("--mca mca_base_component_path DIR", "'--mca mca_base_component_path DIR'"),
    ("-x OMPI_MCA_mca_base_component_path=DIR", "'-x OMPI_MCA_mca_base_component_path=DIR'"),
    # files written outside the work directory
    ("--report-pid OUT", "'--report-pid OUT'"),
    ("--report-uri OUT", "'--report-uri OUT'"),
    ("--output-filename OUT", "'--output-filename OUT'"),
    # a value left to the end would be the next word iomodel writes: the program's path
    ("--oversubscribe --report-pid", "'--report-pid'"),
])
def test_the_bypasses_are_refused_before_anything_runs(tmp_path, bait, options, shown):
    """replay and characterize refuse each, run nothing and write nothing (no
    RAN, no output folder, no work directory, no OUT); `ior` refuses to print
    it, and prints it as given with --trust-cluster."""
    words = shlex.split(filled(options, bait))
    vc = cluster_file(tmp_path, launcher_options=words, workdir=str(tmp_path / "work"))
    want = message(vc, filled(shown, bait))
    for cmd in (["replay", MODEL, "--vc", vc, "--backend", "builtin", "-o", tmp_path / "r"],
                ["characterize", "--vc", vc, "--backend", "builtin", "--sizes", "4k", "--np", "1",
                 "-o", tmp_path / "c"],
                ["ior", MODEL, "--vc", vc]):
        refused(run(*cmd), want)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.sh", "app.txt", "dir", "hostile.yaml"]
    trusted = run("ior", MODEL, "--vc", vc, "--trust-cluster")
    assert trusted.returncode == 0 and f"mpirun {shlex.join(words)} " in trusted.stdout


def test_output_to_the_terminal_passes(tmp_path):
    """--report-pid and --report-uri print to mpirun's stdout (-) or stderr
    (+), which iomodel reads: no file, no trust needed."""
    vc = cluster_file(tmp_path, launcher_options=["--report-pid", "-", "--report-uri", "+"])
    proc = run("ior", MODEL, "--vc", vc)
    assert proc.returncode == 0, proc.stderr
    assert "mpirun --report-pid - --report-uri + " in proc.stdout


# -------------------------------------------------------------- variables follow the options they stand for

@pytest.mark.parametrize("family, options, refused_words", [
    # Open MPI: -x OMPI_MCA_X=V as --mca X V, both ways
    ("openmpi", ["--mca", "btl", "^openib", "-x", "OMPI_MCA_btl=^openib"], []),
    ("openmpi", ["--mca", "plm_rsh_agent", "/tmp/a.sh", "-x", "OMPI_MCA_plm_rsh_agent=/tmp/a.sh"],
     ["--mca plm_rsh_agent /tmp/a.sh", "-x OMPI_MCA_plm_rsh_agent=/tmp/a.sh"]),
    # a parameter of an allowed framework whose value is a directory (vader's shared memory files)
    ("openmpi", ["--mca", "btl_vader_backing_directory", "/tmp", "-x", "OMPI_MCA_btl_vader_backing_directory=/tmp"],
     ["--mca btl_vader_backing_directory /tmp", "-x OMPI_MCA_btl_vader_backing_directory=/tmp"]),
    # a path where a setting belongs; a network address with its prefix length is not one
    ("openmpi", ["--mca", "btl_tcp_if_include", "/tmp/x", "--mca", "btl_tcp_if_include", "10.0.0.0/8"],
     ["--mca btl_tcp_if_include /tmp/x"]),
    # code and programs chosen through the environment set by the file; a name alone passes
    # on the user's own value (-x LD_LIBRARY_PATH, as many clusters need)
    ("openmpi", ["-x", "LD_PRELOAD=/tmp/evil.so", "-x", "LD_LIBRARY_PATH", "-x", "PATH=/tmp",
                 "-x", "PYTHONPATH=/tmp", "-x", "FI_PROVIDER_PATH=/tmp", "-x", "UCX_MODULE_DIR=/tmp",
                 "-x", "PMIX_MCA_mca_base_component_path=/tmp", "-x", "HOME=/tmp", "-x", "UCX_TLS=rc,sm"],
     ["-x LD_PRELOAD=/tmp/evil.so", "-x PATH=/tmp", "-x PYTHONPATH=/tmp",
      "-x FI_PROVIDER_PATH=/tmp", "-x UCX_MODULE_DIR=/tmp", "-x PMIX_MCA_mca_base_component_path=/tmp",
      "-x HOME=/tmp"]),
    # MPICH's Hydra: -genv NAME VALUE, -genv NAME=VALUE, -genv=NAME=VALUE, -genvlist NAMES
    ("mpich", ["-genv", "OMPI_MCA_mca_base_component_path", "/tmp", "-genv=LD_PRELOAD=/x.so",
               "-genv", "MPIR_CVAR_ASYNC_PROGRESS=1", "-genvlist", "OMP_NUM_THREADS,LD_LIBRARY_PATH",
               "-env", "HYDRA_LAUNCHER_EXEC", "/tmp/a.sh"],
     ["-genv OMPI_MCA_mca_base_component_path /tmp", "-genv=LD_PRELOAD=/x.so",
      "-env HYDRA_LAUNCHER_EXEC /tmp/a.sh"]),
    # MPICH's control variables, by their three spellings: a tuning file, a debugger hold
    ("mpich", ["-genv", "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", "t.json", "-genv",
               "MPICH_DEBUG_HOLD=1", "-genv", "MPIR_PARAM_CH3_RMA_ACTIVE_REQ_THRESHOLD", "65536"],
     ["-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE t.json", "-genv MPICH_DEBUG_HOLD=1"]),
    # Slurm: --export=ALL,NAME=VALUE,NAME
    ("slurm", ["--export=ALL,OMPI_MCA_mpi_yield_when_idle=1,OMP_NUM_THREADS=2",
               "--export=ALL,OMPI_MCA_mca_base_component_path=/tmp", "--export", "NONE,LD_PRELOAD"],
     ["--export=ALL,OMPI_MCA_mca_base_component_path=/tmp"]),
])
def test_variables_follow_the_rules_of_their_options(family, options, refused_words):
    assert trust.refused_options(options, family) == refused_words


@pytest.mark.parametrize("family, options, refused_words", [
    # Open MPI reads `--name value` with one dash or two, no `=`, no abbreviation, no letters run together
    ("openmpi", ["-oversubscribe", "--np=4", "--oversub", "-qv", "---oversubscribe"],
     ["--np=4", "--oversub", "-qv", "---oversubscribe"]),
    # a word that is not an option is a program to run, and `:` another launch
    ("openmpi", ["-np", "1", "/tmp/evil", ":", "-np", "1"], ["/tmp/evil :"]),
    # Hydra: `=` attaches a value; its own launchers, never a program of the file's
    ("mpich", ["-ppn=4", "-launcher", "ssh", "-bootstrap-exec", "/tmp/a.sh", "-launcher=manual",
               "-configfile", "/tmp/c", "-outfile-pattern", "o.%r"],
     ["-bootstrap-exec /tmp/a.sh", "-launcher=manual", "-configfile /tmp/c", "-outfile-pattern o.%r"]),
    # getopt: -n4 and --ntasks=4; an optional value only with `=`: `--exclusive user` runs `user`
    ("slurm", ["-n4", "--ntasks=4", "--exclusive", "user", "--exclusive=user", "-K1", "-lu", "--part=x"],
     ["user", "-lu", "--part=x"]),
    # a file named where hosts belong, a task prolog, output files, another working directory
    ("slurm", ["--nodelist=/tmp/hosts", "--task-prolog=/tmp/a.sh", "-o", "out.%t", "--chdir=/tmp",
               "--nodelist=node[01-04]"],
     ["--nodelist=/tmp/hosts", "--task-prolog=/tmp/a.sh", "-o out.%t", "--chdir=/tmp"]),
])
def test_options_are_read_as_their_launcher_reads_them(family, options, refused_words):
    assert trust.refused_options(options, family) == refused_words


# -------------------------------------------------------------- what real clusters need passes

PRODUCTION = {
    # Open MPI with UCX over InfiniBand, a hostfile, 16 ranks a node bound to cores
    "openmpi": ("mpirun", "openmpi", [
        "--hostfile", "hosts.txt", "--map-by", "ppr:16:node:pe=1", "--bind-to", "core",
        "--rank-by", "core", "--report-bindings", "--tag-output", "--timestamp-output",
        "--mca", "pml", "ucx", "--mca", "btl", "^vader,tcp,openib,uct", "-x", "UCX_TLS=rc,sm,self",
        "-x", "UCX_NET_DEVICES=mlx5_0:1", "--mca", "io", "ompio", "--mca", "fcoll", "vulcan",
        "--mca", "fs_ufs_lock_algorithm", "1", "--mca", "coll_hcoll_enable", "0",
        "--mca", "btl_tcp_if_include", "10.0.0.0/8", "--mca", "mpi_yield_when_idle", "1",
        "--mca", "sharedfp", "^sm", "-x", "OMPI_MCA_io=romio321", "-x", "OMP_NUM_THREADS=1",
        "-x", "IOR_HINT__MPI__romio_cb_write=enable", "--timeout", "3600", "--report-pid", "-",
        "--allow-run-as-root", "--oversubscribe"]),
    # MPICH on a cluster reached by ssh: a host file, 16 ranks a node, libfabric's tcp provider
    "mpich": ("mpiexec.hydra", None, [
        "-f", "hosts.txt", "-ppn", "16", "-bind-to", "core", "-map-by", "socket", "-prepend-rank",
        "-launcher", "ssh", "-iface", "ib0", "-genv", "FI_PROVIDER", "tcp", "-genv",
        "MPIR_CVAR_ASYNC_PROGRESS=0", "-genv", "ROMIO_FSTYPE_FORCE", "ufs:", "-genv=OMP_NUM_THREADS=1",
        "-genvlist", "UCX_TLS,OMP_PROC_BIND", "-genv", "IOR_HINT__MPI__striping_factor", "16",
        "-print-all-exitcodes"]),
    # Slurm with PMIx: a partition, an account, a time limit, features, exclusive nodes
    "slurm": ("srun", None, [
        "--mpi=pmix", "-N", "4", "--ntasks-per-node=16", "-p", "compute", "-A", "proj123",
        "-t", "01:00:00", "-C", "ib&skylake", "--exclusive", "--cpu-bind=cores",
        "--distribution=block:block", "--hint=nomultithread", "--mem-per-cpu=2G", "--qos=normal",
        "--reservation=io_test", "-J", "iomodel replay",
        "--export=ALL,OMPI_MCA_io=ompio,OMP_NUM_THREADS=1,IOR_HINT__MPI__striping_factor=16",
        "--label", "--kill-on-bad-exit=1", "--nodelist=node[01-04]"]),
}


@pytest.mark.parametrize("family", sorted(PRODUCTION))
def test_a_real_clusters_options_pass(tmp_path, family):
    launcher, mpi, options = PRODUCTION[family]
    vc = cluster_file(tmp_path, launcher=launcher, mpi=mpi, launcher_options=options)
    proc = run("ior", MODEL, "--vc", vc)
    assert proc.returncode == 0, proc.stderr
    assert f"{launcher} {shlex.join(options)} " in proc.stdout


def test_mpirun_of_an_mpi_it_cannot_tell_must_be_safe_for_both(tmp_path):
    """Where mpirun is not installed (a script printed on a laptop) and run.mpi
    is not given, an option must be safe for Open MPI's mpirun and MPICH's
    mpiexec: --oversubscribe is Open MPI's only; -bind-to core both's."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}
    vc = cluster_file(tmp_path, launcher_options=["--bind-to", "core", "--oversubscribe"])
    refused(run("ior", MODEL, "--vc", vc, env=env),
            message(vc, "'--oversubscribe'", who="mpirun, Open MPI's or MPICH's (run.mpi says which)"))
    said = cluster_file(tmp_path, name="said.yaml", mpi="openmpi",
                        launcher_options=["--bind-to", "core", "--oversubscribe"])
    assert run("ior", MODEL, "--vc", said, env=env).returncode == 0


# -------------------------------------------------------------- the tables against the real launchers

SAMPLE = {"count": ["2"], "range": ["1-2"], "size": ["1G"], "duration": ["10"], "cpus": ["0"],
          "hosts": ["localhost"], "name": ["x"], "constraint": ["x"], "policy": ["core"],
          "text": ["x"], "stdio": ["-"], "file": ["/dev/null"], "setting": ["1"],
          "parameter": ["btl", "self"], "variable": ["OMP_NUM_THREADS=1"],
          "pair": ["OMP_NUM_THREADS", "1"], "variables": ["OMP_NUM_THREADS"], "export": ["ALL"],
          "bootstrap": ["fork"], "exclusive": ["user"], "flag": []}
# values the launcher checks as it reads them
SAMPLE_OF = {("openmpi", "ppr"): ["1:core"], ("slurm", "B"): ["1"], ("slurm", "extra-node-info"): ["1"],
             ("slurm", "m"): ["block"], ("slurm", "distribution"): ["block"], ("slurm", "mpi"): ["pmix"],
             ("slurm", "hint"): ["nomultithread"], ("slurm", "mem-bind"): ["local"],
             ("slurm", "gres"): ["gpu:1"], ("slurm", "cpu-freq"): ["high"],
             ("slurm", "cpu-bind"): ["cores"], ("mpich", "iface"): ["lo"],
             ("slurm", "K"): ["1"], ("slurm", "kill-on-bad-exit"): ["1"]}
LAUNCHER = {"openmpi": ("mpirun", "Open MPI"), "mpich": ("mpiexec.mpich", "HYDRA build details"),
            "slurm": ("srun", "slurm-wlm")}


def spelled(syntax, name, kind, values):
    """The words a user writes for the option (getopt's optional value with `=`)."""
    if syntax == "getopt":
        word = f"-{name}" if len(name) == 1 else f"--{name}"
        if kind.startswith("["):       # -K1, --kill-on-bad-exit=1
            return [f"{word}{'' if len(name) == 1 else '='}{values[0]}"]
        return [word, *values]
    return [f"-{name}" if syntax == "hydra" else f"--{name}", *values]


@pytest.mark.parametrize("family", trust.FAMILIES)
def test_every_option_of_the_tables_is_one_the_launcher_takes(family, tmp_path):
    """Each option with a value of its kind, then --version: the installed
    launcher prints its version only if it read every word before as the
    table says (an unknown option is refused; an option that takes fewer
    values than the table says leaves a word that starts a program; one that
    takes more eats --version). srun gets a configuration of its own, whose
    controller nobody listens for."""
    t = trust.table(family)
    launcher, version = LAUNCHER[family]
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\nSlurmctldPort=9\n"
                    "NodeName=localhost CPUs=2\nPartitionName=x Nodes=localhost\n")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    wrong = []
    for name, kind in sorted(t.options.items()):
        values = SAMPLE_OF.get((family, name), SAMPLE[kind.strip("[]")])
        words = spelled(t.syntax, name, kind, values)
        assert trust.refused_options(words, family) == [], words
        p = subprocess.run([launcher, *words, "--version"], capture_output=True, text=True, env=env,
                           timeout=60, stdin=subprocess.DEVNULL)
        if p.returncode or version not in p.stdout + p.stderr:
            wrong.append((words, p.returncode, (p.stdout + p.stderr)[-300:]))
    assert not wrong
    assert len(t.options) >= 20


def test_the_tables_open_mpi_parameters_of_files_are_refused():
    """Of the MCA parameters of the installed Open MPI (ompi_info, with their
    synonyms) in the allowed frameworks, those refused are exactly the ones
    whose value is a file or a directory (read over by hand: 14 of 552 in
    4.1.4), and those outside are all refused (mca_base_component_path,
    plm_rsh_agent, orte_base_user_debugger among them)."""
    p = subprocess.run(["ompi_info", "--param", "all", "all", "--level", "9", "--parsable"],
                       capture_output=True, text=True, timeout=120)
    names = set()
    for line in p.stdout.splitlines():
        f = line.split(":")
        if len(f) >= 7 and f[3] == "param" and f[5] == "type":
            names.add(f[4])
        elif len(f) > 7 and f[3] == "param" and f[5] == "synonym" and f[6] == "name":
            names.add(f[7])
    t = trust.table("openmpi")
    allowed, refused_names, _ = t.parameters
    inside = {n for n in names if allowed.fullmatch(n)}
    assert {n for n in inside if not trust.parameter_safe(t, n)} == {
        "btl_openib_device_param_files", "btl_openib_hca_param_files", "btl_vader_backing_directory",
        "coll_han_dynamic_rules_filename", "coll_tuned_dynamic_rules_filename", "hwloc_base_topo_file",
        "mpi_show_mca_params_file", "osc_rdma_backing_directory", "osc_sm_backing_directory",
        "pml_monitoring_enable_output", "pml_monitoring_filename", "pml_v_output",
        "rmaps_rank_file_path", "rmaps_resilient_fault_grp_file"}
    assert not any(trust.parameter_safe(t, n) for n in names - inside)
    assert {"mca_base_component_path", "plm_rsh_agent", "orte_base_user_debugger",
            "mca_base_param_files"} <= names - inside


# -------------------------------------------------------------- a real launch, refused then trusted

MARK_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
/* says it was loaded: a line with its process id in MARK */
__attribute__((constructor)) static void mark(void)
{
    char line[32];
    int fd = open(MARK, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        int n = snprintf(line, sizeof line, "%d\n", (int)getpid());
        if (write(fd, line, (size_t)n) < 0)
            n = 0;
        close(fd);
    }
}
"""


def test_a_component_path_is_refused_and_trusted_loads_the_library(small_model, tmp_path):
    """A directory holding a library named like an MCA component (mca_btl_mark.so,
    whose constructor writes a line to `loaded`), put before Open MPI's own in
    mca_base_component_path: the replay refuses it before anything runs (no
    `loaded`, no output folder, no work directory); with --trust-cluster it runs,
    exits 0, and every process of every launch loaded the library: Open MPI
    opens every btl component it finds (it then finds the mark is none and
    goes on), so `loaded` has one line per process. small_model's phases
    (btio_like, 2 ranks): writes 1 to 2, replayed in one launch, and read 3,
    a reread of what they wrote, replayed in a second launch with no setup
    launch before it: 2 launches of 2 ranks, 4 lines of 4 process ids."""
    comp = tmp_path / "components"
    comp.mkdir()
    (tmp_path / "mark.c").write_text(MARK_C)
    subprocess.run(["cc", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    f'-DMARK="{tmp_path / "loaded"}"', "-o", comp / "mca_btl_mark.so",
                    tmp_path / "mark.c"], check=True)
    info = subprocess.run(["ompi_info", "--param", "mca", "base", "--level", "9", "--parsable"],
                          capture_output=True, text=True, check=True).stdout
    default = next(l.split(":value:", 1)[1].strip('"') for l in info.splitlines()
                   if l.startswith("mca:mca:base:param:mca_base_component_path:value:"))
    options = ["--oversubscribe", "--mca", "mca_base_component_path", f"{comp}:{default}"]
    vc = cluster_file(tmp_path, launcher_options=options, workdir=str(tmp_path / "work"))
    replay = ["replay", small_model, "--vc", vc, "--backend", "builtin", "-o", tmp_path / "r"]
    refused(run(*replay), message(vc, f"'--mca mca_base_component_path {comp}:{default}'"))
    assert not any((tmp_path / x).exists() for x in ("loaded", "r", "work"))

    proc = run(*replay, "--trust-cluster", timeout=300)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads((tmp_path / "r" / "results.json").read_text())["runs"]
    assert [(r["phase_ids"], r["np"]) for r in runs.values()] == [([1, 2], 2), ([3], 2)]
    pids = (tmp_path / "loaded").read_text().split()
    assert len(pids) == len(set(pids)) == 4
