"""The IOR round trip: a traced run of IOR's calls gives back IOR's command.

tests/programs/ior_cmd.c makes the calls IOR 4 makes for a command line (its
segmented layout: transfer j of segment i of rank r at i*P*B + r*B + j*T in a
shared file, i*B + j*T in a file of its own); the model of its trace must give
`iomodel ior` the same -a, -s, -b, -t, -F, -c and operation, without -z (the
access is in order).  IOR's -w -r is one run of IOR; iomodel gives the write
and the read as two invocations (the read after a write of its file that is
not measured), each with the original's sizes.  IOR itself is not installed
here: the program stands for it.
"""
import json
import subprocess

import pytest

from iomodel.replay.ior import command, ior_invocations

from conftest import IOMODEL

K, M = 1024, 1024 * 1024


def options(argv):
    """IOR's options of an argv as a dict (flags as True), less -o."""
    out, i = {}, 1
    while i < len(argv):
        if argv[i] in ("-a", "-s", "-b", "-t", "-o", "-N"):
            out[argv[i]] = argv[i + 1]
            i += 2
        else:
            out[argv[i]] = True
            i += 1
    out.pop("-o", None)
    return out


def model_of(traced, tmp_path, np_, args, program="ior_cmd"):
    posix = "POSIX" in args
    r = traced(program, np_, *args, posix=posix)
    m = tmp_path / "m.json"
    p = subprocess.run(IOMODEL + ["analyze", str(r.trace_dir), "-o", str(m), "-q"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(m.read_text())


# (IOR's command, np, the phases' access mode and nested strides, IOR's options back)
CASES = [
    # segmented shared file, collective: 4 transfers a block, then the other ranks' blocks
    ("-a MPIIO -c -s 10 -b 1m -t 256k", 4, "strided", [[10, 4 * M], [4, 256 * K]],
     {"-a": "MPIIO", "-c": True, "-s": "10", "-b": str(M), "-t": str(256 * K)}),
    # the same, independent
    ("-a MPIIO -s 8 -b 256k -t 64k", 2, "strided", [[8, 512 * K], [4, 64 * K]],
     {"-a": "MPIIO", "-s": "8", "-b": str(256 * K), "-t": str(64 * K)}),
    # one block per rank: each rank's transfers one after the other
    ("-a MPIIO -s 1 -b 4m -t 64k", 4, "sequential", None,
     {"-a": "MPIIO", "-s": "1", "-b": str(4 * M), "-t": str(64 * K)}),
    # the paper's Table II form of BT-IO: one transfer a block, 40 segments
    ("-a MPIIO -c -s 40 -b 327680 -t 327680", 4, "strided", None,
     {"-a": "MPIIO", "-c": True, "-s": "40", "-b": "327680", "-t": "327680"}),
    # file per process, one block
    ("-a MPIIO -F -s 1 -b 1m -t 256k", 2, "sequential", None,
     {"-a": "MPIIO", "-F": True, "-s": "1", "-b": str(M), "-t": str(256 * K)}),
    # POSIX, file per process
    ("-a POSIX -F -s 1 -b 1m -t 256k", 2, "sequential", None,
     {"-a": "POSIX", "-F": True, "-s": "1", "-b": str(M), "-t": str(256 * K)}),
    # POSIX, segmented shared file
    ("-a POSIX -s 4 -b 128k -t 32k", 2, "strided", [[4, 256 * K], [4, 32 * K]],
     {"-a": "POSIX", "-s": "4", "-b": str(128 * K), "-t": str(32 * K)}),
]


@pytest.mark.parametrize("cmd,np_,mode,nested,want", CASES, ids=[c[0] for c in CASES])
def test_ior_command_comes_back(traced, tmp_path, cmd, np_, mode, nested, want):
    m = model_of(traced, tmp_path, np_, cmd.split() + ["-w", "-r"])
    data = [p for p in m["phases"]]
    # one write phase and one read phase, every rank in each, the whole file
    seg, blk = int(want["-s"]), int(want["-b"])
    assert [(p["operation"], p["np"], p["weight"]) for p in data] == \
        [("write", np_, np_ * seg * blk), ("read", np_, np_ * seg * blk)]
    for p in data:
        assert p["access_mode"] == mode
        assert p["offsets"].get("nested") == nested
        assert p["collective"] is ("-c" in want)          # POSIX calls: independent
    invs = ior_invocations(m)
    assert [i.operation for i in invs] == ["write", "read"]
    write, read = (options(command(i)) for i in invs)
    assert write == {**want, "-w": True}
    # the read: after a write of its file (-k keeps it), -E reads the file there
    assert read == {**want, "-r": True, "-k": True, "-E": True}
    assert options(command(invs[1].setup)) == {**want, "-w": True, "-k": True}
    for inv in invs:
        assert not [n for n in inv.approximations if "segment" in n or "apart" in n], inv.approximations


def test_reads_of_other_processes_blocks_come_back_as_random_task_order(traced, tmp_path):
    """ior_cmd as IOR's -w -r -Z, -s 2 -b 64k -t 16k at 4 ranks: rank r reads
    back the block of the rank IOR 4 picks (glibc's rand after srand(r): 3, 3,
    2, 2 further, so ranks 0-3 read the blocks of ranks 3, 0, 0, 1: three
    ranks read what rank 0 and rank 3 wrote, none rank 2's).  The model keeps
    the readers' first offsets (3, 0, 0, 1 blocks of 64 KiB); the read comes
    back as IOR's -Z, which reads other tasks' blocks, not each its own."""
    m = model_of(traced, tmp_path, 4, ["-a", "MPIIO", "-s", "2", "-b", "64k", "-t", "16k", "-w", "-r", "-Z"])
    write, read = m["phases"]
    assert "starts" not in write["offsets"] and write["offsets"]["per_rank"] == 64 * K
    assert (read["offsets"]["first"], read["offsets"]["per_rank"], read["offsets"]["starts"]) == \
        (0, None, [3 * 64 * K, 0, 0, 64 * K])
    invs = ior_invocations(m)
    want = {"-a": "MPIIO", "-s": "2", "-b": str(64 * K), "-t": str(16 * K)}
    assert options(command(invs[0])) == {**want, "-w": True}
    assert options(command(invs[1])) == {**want, "-r": True, "-k": True, "-E": True, "-Z": True}
    assert any("read blocks other processes wrote" in n and "3, 0, 0, 1" in n
               for n in invs[1].approximations)
    assert not any("not affine" in n for n in invs[1].approximations)


def test_file_per_process_segments_are_one_block(traced, tmp_path):
    """With -F, IOR's -s 4 -b 1m -t 1m and -s 1 -b 4m -t 1m make the same calls at
    the same offsets (a process's segments follow each other in its own file):
    the trace cannot tell them apart, and iomodel gives the paper's form for
    sequential access, one segment per phase (docs/commands/ior.md)."""
    m = model_of(traced, tmp_path, 2, ["-a", "MPIIO", "-F", "-s", "4", "-b", "1m", "-t", "1m", "-w"])
    [p] = m["phases"]
    assert (p["access_mode"], p["rep"], p["rs"]) == ("sequential", 4, M)
    [inv] = ior_invocations(m)
    assert options(command(inv)) == {"-a": "MPIIO", "-F": True, "-s": "1", "-b": str(4 * M),
                                     "-t": str(M), "-w": True}


# ------------------------------------------------- in order, but not IOR's layout

def test_nested_strides_are_walked_in_order(traced, tmp_path):
    """NAS BT-IO simple's pattern (tests/programs/strides.c simple): each rank
    writes its 320-byte rows of a 16^3 grid of 40-byte points, 8 rows 640 B
    apart in each of 16 planes 10240 B apart, two steps, then reads both back
    through the same open.  Strided with its nest of strides, never random:
    the replay walks it in order (no -z), one row a transfer."""
    m = model_of(traced, tmp_path, 4, ["simple"], "strides")
    w1, w2, rd = m["phases"]
    step = 16 ** 3 * 40
    assert [(p["operation"], p["np"], p["rep"], p["rs"], p["weight"]) for p in m["phases"]] == \
        [("write", 4, 128, 320, step), ("write", 4, 128, 320, step), ("read", 4, 256, 320, 2 * step)]
    assert {p["access_mode"] for p in m["phases"]} == {"strided"}
    assert w1["offsets"]["nested"] == w2["offsets"]["nested"] == [[16, 10240], [8, 640]]
    # the second step's planes follow the first's, 10240 B apart too: 32 planes
    assert rd["offsets"]["nested"] == [[32, 10240], [8, 640]]
    # the ranks' first rows: x0*40 + y0*16*40 with x0, y0 in {0, 8}
    assert (w1["offsets"]["first"], w1["offsets"]["starts"]) == (0, [0, 320, 5120, 5440])
    assert (w2["offsets"]["first"], w1["offsets"]["stride"]) == (step, None)
    assert rd["reread_bytes"] == 2 * step
    write, read = ior_invocations(m)
    assert (write.phase_ids, read.phase_ids) == ([1, 2], [3])
    assert options(command(write)) == {"-a": "MPIIO", "-s": "256", "-b": "320", "-t": "320", "-w": True}
    # read back through the write's open: written and read in one IOR run
    assert options(command(read)) == {"-a": "MPIIO", "-s": "256", "-b": "320", "-t": "320",
                                      "-w": True, "-r": True}
    assert any("nested strides (16 x 10240 B, 8 x 640 B, outermost first)" in n and
               "256 evenly spaced segments of 1 transfer, 1280 B apart" in n
               for n in write.approximations), write.approximations
    assert any("nested strides (32 x 10240 B, 8 x 640 B" in n for n in read.approximations)


def test_jumps_in_order_are_strided(traced, tmp_path):
    """Records written at offsets that only grow, by irregular jumps
    (tests/programs/strides.c jumps): strided without a stride or a nest, in
    order in IOR (no -z), the distances said to differ."""
    m = model_of(traced, tmp_path, 4, ["jumps"], "strides")
    w, rd = m["phases"]
    assert [(p["operation"], p["np"], p["rep"], p["rs"], p["access_mode"]) for p in m["phases"]] == \
        [("write", 4, 6, 1000, "strided"), ("read", 4, 6, 1000, "strided")]
    assert w["offsets"] == {"first": 0, "per_rank": 100000, "stride": None, "contiguous": True}
    write, read = ior_invocations(m)
    assert options(command(write)) == {"-a": "MPIIO", "-s": "6", "-b": "1000", "-t": "1000", "-w": True}
    assert "-z" not in read.flags
    assert any("distance between a process's repetitions is not constant" in n
               for n in write.approximations)
