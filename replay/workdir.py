"""The cluster's work directory (`run.workdir`), where replays and sweeps write
and remove their files: checked before anything is written there, and left
as it was found.

It must be a directory of its own: absent (iomodel creates it, and removes it
after if it is empty again), empty, or iomodel's (a mark file, or nothing but
iomodel's test files, `iomodel.*`). Never `/`, a system directory, a directory
of another user's, or one that holds other files. `~`, `..` and symbolic links
are resolved first, and the runs get the resolved path (docs/security.md)."""
import copy
import os
from pathlib import Path

MARK = ".iomodel-workdir"
# Directories of the system (and what is under them), where no run belongs ...
SYSTEM = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
          "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var")
# ... but for these, which are meant for users' files
USERS_UNDER_SYSTEM = ("/dev/shm", "/var/tmp", "/run/user", "/root")


class WorkdirError(ValueError):
    """A work directory iomodel will not write in."""


def _under(path, top):
    return path == Path(top) or Path(top) in path.parents


def resolve(raw):
    """The work directory as an absolute path: `~` expanded, relative to the
    current directory, `..` and symbolic links resolved."""
    return Path(os.path.realpath(os.path.abspath(os.path.expanduser(str(raw)))))


def _ours(path):
    """An existing directory iomodel may use: empty, marked, or holding only
    iomodel's test files."""
    names = os.listdir(path)
    return not names or MARK in names or all(n.startswith("iomodel.") for n in names)


def check(raw, where="run.workdir"):
    """The resolved work directory, or WorkdirError saying why not."""
    path = resolve(raw)
    shown = f"{where} {str(raw)!r}" + (f" ({path})" if str(path) != str(raw) else "")
    if path == Path("/") or (any(_under(path, d) for d in SYSTEM) and
                             not any(_under(path, d) and path != Path(d) for d in USERS_UNDER_SYSTEM)):
        raise WorkdirError(f"{shown}: a system directory; give a directory of its own for iomodel's "
                           f"test files, e.g. /tmp/iomodel-work or a new folder on the cluster's file system")
    if path.exists():
        if not path.is_dir():
            raise WorkdirError(f"{shown}: not a directory")
        if path.stat().st_uid != os.geteuid():
            raise WorkdirError(f"{shown}: belongs to another user; give a directory of your own")
        if not _ours(path):
            raise WorkdirError(f"{shown}: holds files that are not iomodel's; give a directory of its "
                               f"own (iomodel creates it if it does not exist)")
    return path


class Workdir:
    """`with Workdir(cluster) as cluster:` the cluster with its work directory
    checked and resolved, the directory made (and marked) for the block and,
    if iomodel made it, removed after if nothing else was left there."""

    def __init__(self, cluster):
        self.raw = getattr(cluster, "workdir", None) or "."
        self.path = check(self.raw)
        self.cluster = copy.copy(cluster)
        self.cluster.workdir = str(self.path)
        self.made = []          # directories made here, deepest first
        self.marked = False

    def __enter__(self):
        missing = [p for p in [self.path, *self.path.parents] if not p.exists()]
        try:
            for p in reversed(missing):
                p.mkdir()
                self.made.insert(0, p)
            (self.path / MARK).touch(exist_ok=False)
            self.marked = True
        except FileExistsError:
            pass
        except OSError:         # not this machine's to write (a remote cluster's): its runs will say
            pass
        return self.cluster

    def __exit__(self, *exc):
        if self.marked and os.listdir(self.path) == [MARK]:
            os.unlink(self.path / MARK)
            for p in self.made:
                try:
                    p.rmdir()
                except OSError:
                    break
        return False


def make_workdir(cluster):
    """Check the work directory and create it (callers that keep it)."""
    Workdir(cluster).__enter__()
