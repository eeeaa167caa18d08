"""Output files written whole or not at all, and names from data files made
safe to use as file names and in scripts' comments.

A model, a cluster description or a trace is data a user may have been sent:
none of its strings may choose where iomodel writes or what a script it
writes runs (docs/security.md)."""
import errno
import os
import re
import stat
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


def _cut(name, limit):
    """At most `limit` bytes of a name, cut between characters."""
    return name.encode()[:limit].decode(errors="ignore")


@contextmanager
def atomic_path(path):
    """A temporary file to write `path`'s content to (same suffix, so writers
    that go by the extension write the same format), put in place when the
    block ends and removed if it raises, so that `path` is never left half
    written (a full disk, Ctrl-C).  What `path` is decides how (_Target):
    absent or a regular file, the temporary file beside it is renamed over
    it, keeping the file's permission bits and owner; a symbolic link, the
    same is done to the file it points to (the link stays); a character
    device or a named pipe (/dev/null, /dev/stdout, a pipe a reader holds),
    the content is written through it; a directory, a block device, a socket
    or a named pipe nobody reads are refused (OSError naming `path`)."""
    target = _Target(Path(path))
    # the name's start and a short suffix: a long name's temporary one must fit
    # NAME_MAX (255 bytes) too, with its dots and random letters
    suffix = target.final.suffix if len(target.final.suffix.encode()) <= 16 else ""
    fd, tmp = tempfile.mkstemp(prefix=f".{_cut(target.final.stem, 64)}.", suffix=f".tmp{suffix}",
                               dir=target.scratch)
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        yield Path(tmp)
        target.put(tmp)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


class _Target:
    """Where an output goes and how it gets there (atomic_path)."""

    def __init__(self, path):
        self.path, self.special, self.st = path, False, None
        try:
            st = os.stat(path)               # through links, as the kernel opens it
        except FileNotFoundError:
            st = None
        self.final = Path(os.path.realpath(path)) if path.is_symlink() else path
        if st is None:
            self.final.parent.mkdir(parents=True, exist_ok=True)
        elif stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory (give a file's name)", str(path))
        elif stat.S_ISREG(st.st_mode):
            self.st = st
        elif stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            self.special, self.final = True, Path(path.name)
        else:
            kind = "a block device" if stat.S_ISBLK(st.st_mode) else "a socket"
            raise OSError(errno.EINVAL, f"is {kind}: not written", str(path))
        self.scratch = tempfile.gettempdir() if self.special else self.final.parent

    def put(self, tmp):
        if self.special:
            self._write_through(tmp)
            os.unlink(tmp)
            return
        if self.st is not None:              # the file's own owner and permissions stay
            with suppress(OSError):          # (chown first: it clears the set-user and set-group bits)
                os.chown(tmp, self.st.st_uid, self.st.st_gid)
            os.chmod(tmp, stat.S_IMODE(self.st.st_mode))
        os.replace(tmp, self.final)

    def _write_through(self, tmp):
        """Into a device or a named pipe; one nobody reads would block for
        ever: refused (opening it without blocking says so)."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            if e.errno == errno.ENXIO:
                raise OSError(errno.ENXIO, "is a named pipe no process reads: not written",
                              str(self.path)) from None
            raise
        try:
            os.set_blocking(fd, True)
            with open(tmp, "rb") as src:
                while chunk := src.read(1 << 20):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def write_atomic(path, data):
    """Write text or bytes to `path` whole or not at all (see atomic_path)."""
    with atomic_path(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
    return Path(path)
