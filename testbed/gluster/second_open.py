#!/usr/bin/env python3
"""Does a second open of an open file read its own writes from the page cache?

Usage: python3 testbed/gluster/second_open.py DIR   (DIR on the Gluster mount)

Mimics how Open MPI's OMPIO opens a shared file: one process opens it with
O_CREAT and keeps it open, another opens it. Each writes 2 MiB to its own
block and reads it back through its descriptor. Two cases: the first open
creates the file (a FUSE CREATE), or the file was there before (a FUSE OPEN).
On this testbed (Gluster 10.3, mount direct-io-mode=enable, Linux 6.18) every
read crosses the link (about 62 ms at 300mbit) but one: the second descriptor
of a file the first one created reads from the kernel's page cache (about
1.3 ms; fincore shows the 2 MiB cached while both are open, none after they
are closed). Gluster's FUSE client answers a CREATE with direct I/O without
recording it on the new descriptor, and gives a later OPEN of the same inode
the direct-I/O setting of a descriptor already open on it: none.
Prints one line per descriptor and case; exits 0 (it reports, it does not
judge), 1 on an I/O error.
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
    for case in ("created by the first open", "there before"):
        if os.path.exists(path):
            os.unlink(path)
        if case == "there before":
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
        print(f"file {case}:")
        first = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            second = os.open(path, os.O_RDWR)    # the file exists and is open: a plain OPEN
        except OSError:
            os.close(first)
            os.unlink(path)
            raise
        try:
            for label, fd, offset in (("first open", first, 0), ("second open", second, SIZE)):
                os.pwrite(fd, data, offset)
                t0 = time.monotonic()
                back = os.pread(fd, SIZE, offset)
                ms = (time.monotonic() - t0) * 1e3
                print(f"  {label}: read back its own 2 MiB in {ms:.1f} ms "
                      f"({'same data' if back == data else 'DIFFERENT data'})")
            print(f"  in the page cache while both are open: {resident(path)} bytes")
        finally:
            os.close(first)
            os.close(second)
            print(f"  in the page cache after both closed: {resident(path)} bytes")
            os.unlink(path)

if __name__ == "__main__":
    main()
