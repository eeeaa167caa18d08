"""Output paths of every kind (`-o` of analyze and plot), and whether each is
what it should be afterwards (docs/security.md, "Where iomodel writes";
iomodel/outputs.py).

A target is made in a folder of its own: absent (in folders that may not
exist), a regular file (random permission bits and owner), a symbolic link
(to a file, to a link to one, to a directory, dangling, in a loop, to a
character device), a directory, a named pipe with a reader and without, the
system's /dev/null and a character device of the input's own (mknod, as
root), a path through a regular file; with a long or odd name. After the
command, `check` says what broke, if anything: a device or a pipe replaced,
a link replaced or its target not written, a file's bits or owner changed, a
directory or a file written that a refusal should have left, content that is
not the command's, a temporary file left behind.
"""
import os
import select
import stat
import threading
from pathlib import Path

MAGIC = {".json": b"{", ".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}
KINDS = ("absent", "absent-deep", "file", "link-file", "link-chain", "link-dir", "link-dangling",
         "link-dangling-deep", "link-loop", "link-self", "link-device", "dir", "fifo-read", "fifo",
         "devnull", "device", "notdir", "long-name")


class Reader(threading.Thread):
    """Reads a named pipe until the command is done: a process that holds the
    pipe open for reading, so that a writer does not block on opening it."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data, self.done = bytearray(), threading.Event()
        self.start()

    def run(self):
        while True:
            # whether the command is done, taken before looking at the pipe: all it
            # wrote is then in the pipe (taken after, a select that timed out before
            # the command wrote would end the loop with the output unread)
            done = self.done.is_set()
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            chunk = os.read(self.fd, 1 << 16) if ready else b""
            self.data += chunk
            if not chunk:
                if done:
                    break
                self.done.wait(0.01)

    def close(self):
        self.done.set()
        self.join()
        os.close(self.fd)
        return bytes(self.data)


def _snapshot(path):
    """What a path is, without following a link: kind, bits, owner, device,
    link text, content or directory listing."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return ("missing", e.errno)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(st.st_mode):
        return ("dir", stat.S_IMODE(st.st_mode), sorted(os.listdir(path)))
    if stat.S_ISREG(st.st_mode):
        return ("file", stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, Path(path).read_bytes())
    return (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_rdev)


class Target:
    """One output target, made for input `seed` in folder `base`; `path` is
    what -o gets, `watch` the paths whose state `check` compares."""

    def __init__(self, rnd, base, suffix, scratch, kind=None):
        self.base, self.suffix, self.reader, self.scratch = Path(base), suffix, None, Path(scratch)
        self.kind = kind or rnd.choice(KINDS)
        b = self.base
        stem = rnd.choice(("out", "model", "a b", "é\u00e9", "x\ny", "-o", "out.tmp"))
        name = stem + suffix
        old = b"old content\n"
        self.path, self.written = b / name, None          # written: the file that must get the content
        self.refused = False                               # True: the command must refuse it
        self.watch = []                                    # paths that must be as they were
        k = self.kind
        if k == "absent":
            self.written = self.path
        elif k == "absent-deep":
            self.path = self.written = b / "a" / "b" / name
        elif k == "file":
            self.path.write_bytes(old)
            os.chmod(self.path, rnd.randrange(0o10000))
            os.chown(self.path, rnd.choice((0, 1, 65534)), rnd.choice((0, 1, 65534)))
            self.written = self.path
        elif k in ("link-file", "link-chain"):
            real = b / f"real{suffix}"
            real.write_bytes(old)
            os.chmod(real, rnd.choice((0o600, 0o644, 0o400, 0o4755, 0o777)))
            if k == "link-chain":
                os.symlink(real.name, b / "mid")
                self.watch.append(b / "mid")
                real_via = "mid"
            else:
                real_via = rnd.choice((real.name, str(real)))
            os.symlink(real_via, self.path)
            self.watch.append(self.path)
            self.written = real
        elif k == "link-dir":
            (b / "d").mkdir()
            (b / "d" / "keep").write_bytes(old)
            os.symlink("d", self.path)
            self.watch += [self.path, b / "d"]
            self.refused = True
        elif k in ("link-dangling", "link-dangling-deep"):
            dest = b / ("nowhere" + suffix if k == "link-dangling" else f"x/y/nowhere{suffix}")
            os.symlink(os.path.relpath(dest, b), self.path)
            self.watch.append(self.path)
            self.written = dest
        elif k in ("link-loop", "link-self"):
            if k == "link-loop":
                os.symlink("loop2", self.path)
                os.symlink(name, b / "loop2")
                self.watch.append(b / "loop2")
            else:
                os.symlink(name, self.path)
            self.watch.append(self.path)
            self.refused = True
        elif k == "link-device":
            os.mknod(b / "dev", 0o666 | stat.S_IFCHR, os.makedev(1, 3))     # the null device's numbers
            os.symlink("dev", self.path)
            self.watch += [self.path, b / "dev"]
        elif k == "dir":
            self.path.mkdir()
            (self.path / "keep").write_bytes(old)
            self.watch.append(self.path)
            self.refused = True
        elif k in ("fifo", "fifo-read"):
            os.mkfifo(self.path, rnd.choice((0o600, 0o666, 0o644)))
            self.watch.append(self.path)
            if k == "fifo-read":
                self.reader = Reader(self.path)
            else:
                self.refused = True
        elif k == "devnull":
            self.path = Path("/dev/null")
            self.watch.append(self.path)
        elif k == "device":
            os.mknod(self.path, rnd.choice((0o666, 0o600, 0o620)) | stat.S_IFCHR, os.makedev(1, 3))
            self.watch.append(self.path)
        elif k == "notdir":
            (b / "f").write_bytes(old)
            self.path = b / "f" / name
            self.watch.append(b / "f")
            self.refused = True
        else:                                              # a name of 200 to 255 bytes
            n = rnd.randrange(200, 256)
            self.path = self.written = b / ("n" * (n - len(suffix)) + suffix)
        self.before = {p: _snapshot(p) for p in self.watch}
        if self.written is not None and self.written not in self.watch:
            self.before[self.written] = _snapshot(self.written)

    def check(self, rc):
        """What is wrong with the target after the command exited with rc
        (0: it said it wrote it), as a sentence, or None."""
        got = self.reader.close() if self.reader else None
        probs = []
        for p in self.watch:
            if _snapshot(p) != self.before[p]:
                probs.append(f"{p} was {self.before[p][:2]}, now {_snapshot(p)[:2]}")
        if self.path == Path("/dev/null") and not stat.S_ISCHR(os.lstat("/dev/null").st_mode):
            os.replace(self.path, self.base / "devnull-was")           # the machine's /dev/null put back
            os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            probs.append("/dev/null replaced (restored)")
        if rc == 0 and self.refused:
            probs.append(f"accepted an output {self.kind} target, which must be refused")
        if self.written is not None:
            now = _snapshot(self.written)
            if rc == 0:
                if now[0] != "file" or not now[-1].startswith(MAGIC[self.suffix]):
                    probs.append(f"{self.written} is not the output: {now[:2]}")
                elif self.kind == "file" or self.before[self.written][0] == "file":
                    was = self.before[self.written]
                    if now[1:4] != was[1:4]:
                        probs.append(f"{self.written}: bits or owner {now[1:4]}, were {was[1:4]}")
            elif now != self.before[self.written]:
                probs.append(f"{self.written} changed by a command that failed: {now[:2]}")
        if self.reader and rc == 0 and not got.startswith(MAGIC[self.suffix]):
            probs.append(f"the pipe's reader got {got[:16]!r}, not the output")
        probs += [f"temporary file left: {t}" for t in self.leftovers()]
        return "; ".join(probs) or None

    def leftovers(self):
        """Temporary files of iomodel/outputs.py (.STEM.XXXX.tmpSUFFIX) left in the
        folders an output may go through, and anything in the temporary folder
        (`scratch`, the input's own: where a device's or a pipe's output is put
        together)."""
        out = [self.scratch / n for n in os.listdir(self.scratch)]
        for d in (self.base, self.base / "a" / "b", self.base / "x" / "y"):
            try:
                out += [d / n for n in os.listdir(d) if n.startswith(".") and ".tmp" in n]
            except OSError:
                pass
        return out
