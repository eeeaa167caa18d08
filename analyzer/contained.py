"""Run a function in a child process, so that what a C library it calls does
wrong on a damaged input (a crash, an abort, a hang, an allocation without
bound) ends in an error of ours, not in the end of iomodel.

    value = run_contained(fn, (arg,), seconds=60, memory=2 << 30)

The child is forked (no new interpreter: nothing to import again, a few
milliseconds), runs fn(*args) under resource limits (its address space at
most `memory` bytes more than its parent's, `seconds` of CPU time, no core
file), and sends the value back through a pipe, pickled.  Whatever it writes
on its standard output and error (where C libraries print their complaints)
is kept, not shown: the error quotes it.  An exception fn raises
is raised here again; a child that dies, runs out of its memory or is still
at it after `seconds` gives ChildFailed.
"""
import ctypes
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import traceback


class ChildFailed(Exception):
    """The child did not give a value: `reason` says why in words, `said` what
    it wrote, in one line (or "")."""

    def __init__(self, reason, said=""):
        super().__init__(reason + (f" (it said: {said})" if said else ""))
        self.reason, self.said = reason, said


class ChildBug(Exception):
    """An exception of fn's that could not be sent back as it was: a bug, not bad input."""


def _address_space():
    """This process's address space (VmSize), in bytes; None where /proc does not say."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _limit(kind, value):
    """Lower a resource limit to `value`, never above the one we already have."""
    soft, hard = resource.getrlimit(kind)
    if soft != resource.RLIM_INFINITY:
        value = min(value, soft)
    resource.setrlimit(kind, (value, hard))


def _die_with_parent():
    """SIGKILL this process when its parent ends (Linux), so that a reader left
    behind by a parent killed on a timeout does not run on."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# the signals of a crash: their handlers set back to the system's in the child, where an
# MPI library's own (installed in a process of an MPI analysis) would print its backtrace
CRASHES = (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT)


def _child(conn, out_fd, fn, args, seconds, memory):
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")     # Python's own warnings: not the library's
    for sig in CRASHES:
        signal.signal(sig, signal.SIG_DFL)
    _die_with_parent()
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_CPU, int(seconds) + 2)
    space = _address_space()
    before = resource.getrlimit(resource.RLIMIT_AS)
    if space is not None:
        _limit(resource.RLIMIT_AS, space + memory)
    try:
        msg = ("value", fn(*args))
    except MemoryError:
        msg = ("memory",)
    except Exception as e:                  # noqa: BLE001 - sent to the parent, which raises it
        msg = ("error", e, "".join(traceback.format_exception(e)))
    # the bound is fn's: telling the answer and exiting must not run out of it
    # (what a library left allocated after a MemoryError stays with us)
    resource.setrlimit(resource.RLIMIT_AS, before)
    try:
        conn.send(msg)
    except MemoryError:
        conn.send(("memory",))
    except Exception:                       # noqa: BLE001 - an exception that cannot be pickled
        conn.send(("error", None, msg[-1]))
    conn.close()


def _said(f, most=400):
    """What the child wrote, in one line: its lines, each once, joined by "; "."""
    f.seek(0)
    lines = [x.strip().rstrip(".") for x in f.read().decode(errors="replace").splitlines()]
    said = "; ".join(dict.fromkeys(x for x in lines if x))
    return said if len(said) <= most else said[:most - 3] + "..."


def run_contained(fn, args=(), *, seconds, memory):
    """fn(*args) computed in a child process under limits (see the module's
    docstring): (its value, what the child wrote in one line, or "")."""
    ctx = multiprocessing.get_context("fork")
    mine, theirs = ctx.Pipe(duplex=False)
    with tempfile.TemporaryFile() as out:
        p = ctx.Process(target=_child, args=(theirs, out.fileno(), fn, args, seconds, memory),
                        daemon=True)
        p.start()
        theirs.close()
        msg, late = None, False
        try:
            if mine.poll(seconds):          # an answer, or the pipe closed by its end
                try:
                    msg = mine.recv()       # sent once the work is done: its exit is not awaited
                except (EOFError, OSError):
                    p.join(10)
            else:
                late = True
        finally:
            if msg is None and p.is_alive():    # past its time, or this process interrupted
                p.kill()
                p.join()
            mine.close()
        said = _said(out)
    if late:
        raise ChildFailed(f"the reader took more than {seconds:.3g} s", said)
    if msg is None:
        code = p.exitcode
        if code == -signal.SIGXCPU:
            raise ChildFailed(f"the reader took more than {int(seconds) + 2} s of CPU time", said)
        if code is not None and code < 0:
            raise ChildFailed(f"the reader crashed ({signal.Signals(-code).name})", said)
        raise ChildFailed(f"the reader ended without an answer (exit code {code})", said)
    if msg[0] == "memory":
        size = f"{memory / 2 ** 30:.1f} GiB" if memory >= 2 ** 30 else f"{memory / 2 ** 20:.0f} MiB"
        raise ChildFailed(f"the reader needed more than {size} of memory", said)
    if msg[0] == "error":
        if msg[1] is None:
            raise ChildBug(msg[2].strip().splitlines()[-1])
        if hasattr(msg[1], "add_note"):
            msg[1].add_note(f"in the reader process: {msg[2]}")
        raise msg[1]
    return msg[1], said
