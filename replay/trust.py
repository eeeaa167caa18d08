"""What a cluster description may make iomodel run (docs/security.md).

A cluster description names programs iomodel starts: the launcher (`mpirun`
or `srun`, nothing else), its options, and IOR (`run.ior`). A description is
trusted like a shell script for those, but the launcher's options can also
hand the launch itself to another program (Open MPI's `--mca plm_rsh_agent
SCRIPT`, `--launch-agent`), preload libraries into every process (`-x
LD_PRELOAD=...`, `srun --export=LD_PRELOAD=...`) or run scripts around each
task (`srun --task-prolog`): a description someone sent you must not do that
unseen. Such options are refused unless the user says they trust the file
(`--trust-cluster`)."""
import re

# Options that take the launch, or each task, out of the launcher's own hands.
_AGENT_OPTIONS = {
    # Open MPI: the remote agent, an install prefix whose orted starts, MCA parameter files
    "--launch-agent", "-launch-agent", "--prefix", "-prefix", "--tune", "-tune", "-am", "--am",
    "--preload-files", "-preload-files", "--preload-binary", "-preload-binary",
    # MPICH's Hydra
    "-launcher", "--launcher", "-launcher-exec", "--launcher-exec", "-bootstrap",
    "-bootstrap-exec", "--bootstrap-exec",
    # Slurm
    "--prolog", "--epilog", "--task-prolog", "--task-epilog", "--bcast",
}
_MCA_OPTIONS = {"--mca", "-mca", "--gmca", "-gmca"}
_ENV_OPTIONS = {"-x": 1, "-genv": 2, "--genv": 2, "-env": 2, "--env": 2}   # option -> words it takes
# MCA parameters that choose the remote agent or read more parameters from a file
_RISKY_MCA = re.compile(r"agent|^plm_rsh_|^mca_base_param_files$|^mca_base_envar_file_prefix$", re.I)
# variables that load code into every process or choose which programs run
_RISKY_ENV = re.compile(r"^(LD_|DYLD_)|^PATH$|^PYTHON(PATH|STARTUP|HOME)$|^BASH_ENV$|^ENV$|AGENT", re.I)


class UntrustedCluster(ValueError):
    """A cluster description whose launcher options would run programs it names."""


def risky_launcher_options(options):
    """The launcher options (a list of words) that would start other programs
    or load code into the processes, each as the words that do it."""
    out, i = [], 0
    while i < len(options):
        word = options[i]
        name, eq, value = word.partition("=")
        if name in _AGENT_OPTIONS:
            nxt = options[i + 1] if not eq and i + 1 < len(options) and \
                not options[i + 1].startswith("-") else None
            out.append(word if nxt is None else f"{word} {nxt}")
        elif word in _MCA_OPTIONS and i + 1 < len(options):
            if _RISKY_MCA.search(options[i + 1]):
                out.append(" ".join(options[i:i + 3]))
            i += 2
        elif word in _ENV_OPTIONS and i + 1 < len(options):
            var, sets, _ = options[i + 1].partition("=")
            # Open MPI's -x NAME passes the user's own variable on; -x NAME=VALUE sets it
            if _RISKY_ENV.search(var) and (sets or word != "-x"):
                out.append(" ".join(options[i:i + 1 + _ENV_OPTIONS[word]]))
            i += _ENV_OPTIONS[word]
        elif name == "--export" and eq:
            bad = [v for v in value.split(",") if "=" in v and _RISKY_ENV.search(v.partition("=")[0])]
            if bad:
                out.append(word)
        elif name.startswith("OMPI_MCA_") and _RISKY_MCA.search(name[len("OMPI_MCA_"):]):
            out.append(word)
        i += 1
    return out


def check_launcher_options(cluster):
    """Raise UntrustedCluster when the description's launcher options would run
    programs it names, unless the user trusted it (cluster.trusted)."""
    if getattr(cluster, "trusted", False):
        return
    bad = risky_launcher_options(list(getattr(cluster, "launcher_options", None) or []))
    if bad:
        where = getattr(cluster, "path", None) or getattr(cluster, "name", "the cluster description")
        raise UntrustedCluster(
            f"{where}: run.launcher_options: {'; '.join(repr(b) for b in bad)} would have the launcher "
            f"start programs or load libraries the description names; if you trust this file as you "
            f"would a shell script, give --trust-cluster (docs/security.md)")
