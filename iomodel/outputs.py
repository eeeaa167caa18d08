"""Output files written whole or not at all, and names from data files made
safe to use as file names and in scripts' comments.

A model, a cluster description or a trace is data a user may have been sent:
none of its strings may choose where iomodel writes or what a script it
writes runs (docs/security.md)."""
import os
import re
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path


def safe_name(text, fallback="unnamed", limit=64):
    """A name from a data file as one file-name part: letters, digits, '.', '_'
    and '-' only (anything else becomes '_'), no leading dot, at most `limit`
    characters, so it never names another directory or a hidden file."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("._-")[:limit].strip("._-")
    return s or fallback


def comment_text(text):
    """Text from a data file made fit for one comment line of a script: every
    character that is not printable (a newline above all) becomes a space."""
    return "".join(c if c.isprintable() else " " for c in str(text))


def _umask():
    old = os.umask(0)
    os.umask(old)
    return old


@contextmanager
def atomic_path(path):
    """A temporary file beside `path` (same suffix, so writers that go by the
    extension write the same format) to write to: renamed over `path` when the
    block ends, removed if it raises, so `path` is never left half written (a
    full disk, Ctrl-C). The folder is created if missing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path, data):
    """Write text or bytes to `path` whole or not at all (see atomic_path)."""
    with atomic_path(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
    return Path(path)
