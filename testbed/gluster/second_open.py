#!/usr/bin/env python3
"""Does a second open of an open file read its own writes from the page cache?

Usage: python3 testbed/gluster/second_open.py DIR   (DIR on the Gluster mount)

Mimics how Open MPI's OMPIO opens a shared file: one process creates it and
keeps it open, another opens the existing file. Each writes 2 MiB to its own
block and reads it back through its descriptor. On this testbed (Gluster 10.3,
mount direct-io-mode=enable, Linux 6.18) the creator's read crosses the link
(about 62 ms at 300mbit) while the second descriptor's read comes from the
kernel's page cache (about 1.3 ms; fincore shows the 2 MiB cached while both
are open, none after they are closed). Prints one line per descriptor and the
page-cache residency; exits 0 (it reports, it does not judge).
"""
import os
import subprocess
import sys
import time

SIZE = 2 * 1024 * 1024


def resident(path):
    """Bytes of path in the page cache, per util-linux fincore ('?' without it)."""
    try:
        out = subprocess.run(["fincore", "-nb", "-o", "RES", path], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: second_open.py DIR  (an existing directory on the mount to test)")
    path = os.path.join(sys.argv[1], "iomodel-second-open.dat")
    try:
        measure(path)
    except OSError as e:
        sys.exit(f"second_open.py: {path}: {e.strerror or e}")


def measure(path):
    data = os.urandom(SIZE)
    if os.path.exists(path):
        os.unlink(path)
    creator = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        opener = os.open(path, os.O_RDWR)      # the file exists and is open: a plain OPEN
    except OSError:
        os.close(creator)
        os.unlink(path)
        raise
    try:
        for label, fd, offset in (("creator", creator, 0), ("second open", opener, SIZE)):
            os.pwrite(fd, data, offset)
            t0 = time.monotonic()
            back = os.pread(fd, SIZE, offset)
            ms = (time.monotonic() - t0) * 1e3
            print(f"{label}: read back its own 2 MiB in {ms:.1f} ms ({'same data' if back == data else 'DIFFERENT data'})")
        print(f"in the page cache while both are open: {resident(path)} bytes")
    finally:
        os.close(creator)
        os.close(opener)
        print(f"in the page cache after both closed: {resident(path)} bytes")
        os.unlink(path)


if __name__ == "__main__":
    main()
