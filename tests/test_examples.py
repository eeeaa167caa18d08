"""The example applications of examples/ (fpp_io.c, random_io.c, py_io.py),
traced for real at 4 ranks with small sizes, against models worked out by
hand from their header comments and the phase rule of
docs/commands/analyze.md; plus their data on disk, the offsets every rank
used, and their usage errors.

The C examples are compiled by conftest's build_dir (every examples/*.c);
py_io.py runs under the venv's python.  Every checked fact is exact: none
depends on timing.
"""
import os
import subprocess
import sys

import pytest
from conftest import EXAMPLES, IOMODEL, PROGRAMS, ROOT, Run, mpirun, rank_events

sys.path.insert(0, str(PROGRAMS))
import expected_models as em  # noqa: E402  (only to cross-check the LCG below)

NP = 4
KiB = 1024


# ----------------------------------------------------------------- helpers

def lcg_perm(seed, n):
    """random_io.c's permutation of 0..n-1, written again from its header:
    x = seed (uint32); next() = ((x = x*1103515245 + 12345) >> 16) & 0x7fff;
    perm[j] = j; for j = n-1 down to 1: swap(perm[j], perm[next() % (j+1)])."""
    x = seed % 2**32
    perm = list(range(n))
    for j in range(n - 1, 0, -1):
        x = (x * 1103515245 + 12345) % 2**32
        k = ((x >> 16) & 0x7FFF) % (j + 1)
        perm[j], perm[k] = perm[k], perm[j]
    return perm


def content(rank, piece, n):
    """Byte i of a piece: (rank*7 + piece*13 + i) % 251 (all three programs)."""
    return bytes((rank * 7 + piece * 13 + i) % 251 for i in range(n))


def model_of(run):
    from iomodel.analyzer import analyze
    return analyze(run.trace_dir)


def trace_command(tmp_path, name, np_, cmd, *args):
    """`iomodel trace` around mpirun, as conftest's traced() does, for any command."""
    data = tmp_path / f"{name}-data"
    data.mkdir()
    trace = tmp_path / f"{name}-trace"
    full = IOMODEL + ["trace", "-o", str(trace), "--", *mpirun(np_, *cmd, data, *args)]
    proc = subprocess.run(full, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{' '.join(map(str, full))} failed ({proc.returncode}):\n" \
                                 f"{proc.stdout}\n{proc.stderr}"
    return Run(trace, data, proc)


def phase_facts(model, p):
    """The timing-free facts of a phase (file by the basename of its name)."""
    return {
        "id": p["id"], "file": os.path.basename(model["files"][p["file"]]["name"]),
        "operation": p["operation"], "routine": p["routine"], "collective": p["collective"],
        "np": p["np"], "ranks": p["ranks"], "iop": p["iop"],
        "request_sizes": p["request_sizes"], "rs": p["rs"], "rs_min": p["rs_min"],
        "rs_max": p["rs_max"], "rs_groups": p.get("rs_groups"), "rep": p["rep"],
        "weight": p["weight"], "access_mode": p["access_mode"], "offsets": p["offsets"],
        "logical_time": p["logical_time"], "reread_bytes": p.get("reread_bytes"),
    }


def phase(id_, file, operation, routine, collective, rs, rep, weight, mode, offsets,
          lfirst, comm_between, reread=None):
    """Expected facts of a phase of all NP ranks, one operation of rs bytes per repetition."""
    return {"id": id_, "file": file, "operation": operation, "routine": routine,
            "collective": collective, "np": NP, "ranks": f"0-{NP - 1}", "iop": 1,
            "request_sizes": [rs], "rs": rs, "rs_min": rs, "rs_max": rs, "rs_groups": None,
            "rep": rep, "weight": weight, "access_mode": mode, "offsets": offsets,
            "logical_time": {"first": lfirst, "comm_between": comm_between},
            "reread_bytes": reread}


def file_facts(model):
    out = {}
    for f in model["files"]:
        out[os.path.basename(f["name"])] = {
            "access_type": f["access_type"], "np": f["np"], "role": f["role"],
            "iof_size": f["iof_size"], "inf_size": f["inf_size"], "size": f["size"],
            "extent": f["extent"], "access_mode": f["access_mode"],
            "paths": sorted(os.path.basename(x) for x in f["paths"])}
    return out


def check_top(model, max_comm_gap, runs, order, weight, capacity, features):
    assert model["application"]["np"] == NP
    assert model["analysis"]["max_comm_gap"] == max_comm_gap
    assert model["analysis"]["threshold_rule"].startswith("auto"), \
        model["analysis"]["threshold_rule"]
    assert model["runs"] == runs
    assert model["order"] == order
    assert model["weight"] == weight
    assert model["storage_capacity"] == capacity
    assert model["application"]["features"] == {
        "explicit_offsets": True, "individual_pointers": False, "shared_pointers": False,
        "blocking": True, "nonblocking": False, **features}


def data_calls(run):
    """Per rank: (routine, file basename, absolute offset, bytes) of its data calls."""
    return {r: [(e["routine"], e["file"], e["abs_offset"], e["bytes"]) for e in evs if e["data"]]
            for r, evs in rank_events(run.trace()).items()}


# ---------------------------------------------------------------- fpp_io

def test_fpp_io_model(traced):
    """fpp_io, T = 4096, N = 4: per rank 4 writes at j*4096, a barrier, 4
    reads at j*4096, on fpp.<r>.dat (MPI_COMM_SELF).  Counts between
    consecutive operations: all 0 -> one group -> max_comm_gap 8; two
    phases of rep 4, sequential (each write starts where the previous one
    ended), stride 4096, every rank's first offset 0 (per_rank 0);
    weight 4 ranks * 4096 * 4 = 65536 each.  The group of unique files
    fpp.{rank}.dat: iof = inf = 65536, extent 16384 (per file).  Each rank
    reads, in the same open, exactly the bytes it wrote: reread_bytes =
    the read phase's weight, 65536."""
    T, N = 4096, 4
    run = traced("fpp_io", NP, T, N)
    model = model_of(run)

    offsets = {"first": 0, "per_rank": 0, "stride": 4096, "contiguous": True}
    assert [phase_facts(model, p) for p in model["phases"]] == [
        phase(1, "fpp.{rank}.dat", "write", "MPI_File_write_at", False, 4096, 4, 65536,
              "sequential", offsets, 0, 0),
        phase(2, "fpp.{rank}.dat", "read", "MPI_File_read_at", False, 4096, 4, 65536,
              "sequential", offsets, 1, 0, reread=65536)]
    assert file_facts(model) == {"fpp.{rank}.dat": {
        "access_type": "unique", "np": 4, "role": "inout", "iof_size": 65536,
        "inf_size": 65536, "size": 65536, "extent": 16384, "access_mode": "sequential",
        "paths": ["fpp.0.dat", "fpp.1.dat", "fpp.2.dat", "fpp.3.dat"]}}
    check_top(model, 8, [[1, 1], [2, 2]], [[1, 2]], 131072, 65536,
              {"collective": False, "independent": True})

    calls = data_calls(run)
    for r in range(NP):
        name = f"fpp.{r}.dat"
        assert calls[r] == [("MPI_File_write_at", name, j * T, T) for j in range(N)] + \
            [("MPI_File_read_at", name, j * T, T) for j in range(N)], f"rank {r}"
        data = (run.data_dir / name).read_bytes()
        assert data == b"".join(content(r, j, T) for j in range(N)), name
    assert sorted(os.listdir(run.data_dir)) == [f"fpp.{r}.dat" for r in range(NP)]


# ------------------------------------------------------------- random_io

def test_lcg_matches_ior_like():
    """The test's LCG, with random_io's write seeds, is ior_like's (N = 8),
    worked out separately in expected_models.py."""
    for r in range(NP):
        assert lcg_perm(12345 + 1000 * r, 8) == em.ior_random_perm(r, 8)


def test_random_io_model(traced):
    """random_io, T = 4096, N = 8: rank r writes piece perm_w[j] of its block
    at (r*8 + perm_w[j])*4096, a barrier, then reads piece perm_r[j].
    Counts all 0 -> max_comm_gap 8.  One burst per loop: rep 8, iop 1,
    weight 4*8*4096 = 131072.  Consecutive offsets of a rank are neither
    contiguous nor a constant distance apart (checked on the permutations
    below) -> random, stride null.  First offsets (r*8 + perm[0])*4096:
    writes (perm_w[0] = 0, 4, 1, 5) 0, 12, 17, 29 pieces -> not affine,
    per_rank null, starts relative to the first; reads (perm_r[0] = 4, 3, 3,
    5) 4, 11, 19, 29 pieces -> not affine.  Every piece a rank reads is one
    it wrote through the same open: reread_bytes = 131072."""
    T, N = 4096, 8
    perm_w = {r: lcg_perm(12345 + 1000 * r, N) for r in range(NP)}
    perm_r = {r: lcg_perm(54321 + 1000 * r, N) for r in range(NP)}
    for perm in (*perm_w.values(), *perm_r.values()):
        assert sorted(perm) == list(range(N))
        assert len({b - a for a, b in zip(perm, perm[1:])}) > 1    # not constant: random
    assert [perm_w[r][0] for r in range(NP)] == [0, 4, 1, 5]
    assert [perm_r[r][0] for r in range(NP)] == [4, 3, 3, 5]

    run = traced("random_io", NP, T, N)
    model = model_of(run)

    w_off = {"first": 0, "per_rank": None, "stride": None, "contiguous": True,
             "starts": [0, 12 * 4096, 17 * 4096, 29 * 4096]}
    r_off = {"first": 4 * 4096, "per_rank": None, "stride": None, "contiguous": True,
             "starts": [0, 7 * 4096, 15 * 4096, 25 * 4096]}
    assert [phase_facts(model, p) for p in model["phases"]] == [
        phase(1, "random.dat", "write", "MPI_File_write_at", False, 4096, 8, 131072,
              "random", w_off, 0, 0),
        phase(2, "random.dat", "read", "MPI_File_read_at", False, 4096, 8, 131072,
              "random", r_off, 1, 0, reread=131072)]
    assert file_facts(model) == {"random.dat": {
        "access_type": "shared", "np": 4, "role": "inout", "iof_size": 131072,
        "inf_size": 131072, "size": 131072, "extent": 131072, "access_mode": "random",
        "paths": ["random.dat"]}}
    check_top(model, 8, [[1, 1], [2, 2]], [[1, 2]], 262144, 131072,
              {"collective": False, "independent": True})
    from iomodel.models.report import phase_rows
    assert [r["access"] for r in phase_rows(model)] == ["random, shared", "random, shared, reread"]

    calls = data_calls(run)
    # rank 1's block starts at 1*8*4096 = 32768: its writes, piece by piece
    assert [c[2] for c in calls[1][:N]] == [32768 + k * 4096 for k in perm_w[1]]
    for r in range(NP):
        base = r * N * T
        assert calls[r] == \
            [("MPI_File_write_at", "random.dat", base + k * T, T) for k in perm_w[r]] + \
            [("MPI_File_read_at", "random.dat", base + k * T, T) for k in perm_r[r]], f"rank {r}"
    data = (run.data_dir / "random.dat").read_bytes()
    assert data == b"".join(content(r, k, T) for r in range(NP) for k in range(N))


@pytest.mark.parametrize("count", [256, 64])
def test_random_io_shards_on_the_sharded_gluster_vc(traced, count):
    """random_io at 2 ranks, T = 16 KiB: random.dat holds 2 * count * 16384 B,
    8 MiB at count 256 and 2 MiB at 64.  The two-server Gluster VC
    (testbed/testbed-gluster2.yaml: GlusterFS, 2 data servers, shards of 4 MB =
    4194304 B) holds 8 MiB in 2 shards, which land apart or together by a draw
    per file: the note names the file; 2 MiB is one shard: no note.  Neither the
    one-server VC nor VC 4 (PVFS2, which stripes round robin) gets one."""
    from iomodel.cluster.description import load_cluster
    from iomodel.cluster.predict import shard_note
    model = model_of(traced("random_io", 2, 16384, count))
    (f,) = model["files"]
    assert (os.path.basename(f["name"]), f["access_type"], f["size"]) == \
        ("random.dat", "shared", 2 * count * 16384)
    testbed = ROOT / "testbed"
    note = shard_note(model, load_cluster(testbed / "testbed-gluster2.yaml"))
    if count == 256:
        assert note == (
            "testbed-gluster2 shards files in 4 MiB pieces over 2 data servers, each shard "
            "where the hash of an identity drawn anew for the file puts it: the shared files "
            f"{f['name']} (8 MiB, 2 shards) may sit on one server in one run and spread in the "
            "next, and their phases take longer when their processes share one server's "
            "link; the profile's points and a replay draw placements of their own")
    else:
        assert note is None
    assert shard_note(model, load_cluster(testbed / "testbed-gluster.yaml")) is None
    assert shard_note(model, load_cluster(ROOT / "cluster" / "shipped" / "vc4.yaml")) is None


# ----------------------------------------------------------------- py_io

def test_py_io_model(tmp_path):
    """py_io, B = 4 KiB, S = 3: writes at (s*4 + r)*4096 (Write_at_all)
    with 4 Allreduce between steps, a barrier, 3 reads of the same blocks
    with nothing between.  Counts {4, 0}: (1+4)/(1+0) = 5 >= 4 ->
    max_comm_gap 0: the writes are 3 phases of rep 1 (weight 4*4096 =
    16384, sequential: one operation per process; first s*16384, per_rank
    4096; logical time 0, 4, 8), the reads one phase of rep 3 (weight
    49152, strided: a rank's reads are 16384 apart; logical time 4*2 + 1 =
    9); each rank reads back its own blocks in the same open: reread_bytes
    49152.  Runs [1, 3] (identical writes), [4, 4].  The file's mode is not
    checked: sequential and strided phases move the same bytes (a tie the
    docs leave open)."""
    B, S = 4 * KiB, 3
    run = trace_command(tmp_path, "py_io", NP, [sys.executable, EXAMPLES / "py_io.py"], 4, S)
    model = model_of(run)

    def w_off(s):
        return {"first": s * 16384, "per_rank": 4096, "stride": None, "contiguous": True}
    writes = [phase(s + 1, "py_io.dat", "write", "MPI_File_write_at_all", True, 4096, 1, 16384,
                    "sequential", w_off(s), 4 * s, 0) for s in range(S)]
    read = phase(4, "py_io.dat", "read", "MPI_File_read_at_all", True, 4096, 3, 49152, "strided",
                 {"first": 0, "per_rank": 4096, "stride": 16384, "contiguous": True}, 9, 0,
                 reread=49152)
    assert [phase_facts(model, p) for p in model["phases"]] == [*writes, read]
    files = file_facts(model)
    assert files["py_io.dat"].pop("access_mode") in ("sequential", "strided")
    assert files == {"py_io.dat": {
        "access_type": "shared", "np": 4, "role": "inout", "iof_size": 49152,
        "inf_size": 49152, "size": 49152, "extent": 49152, "paths": ["py_io.dat"]}}
    check_top(model, 0, [[1, 3], [4, 4]], [[1, 2], [2, 3], [3, 4]], 98304, 49152,
              {"collective": True, "independent": False})

    calls = data_calls(run)
    for r in range(NP):
        blocks = [(s * NP + r) * B for s in range(S)]
        assert calls[r] == [("MPI_File_write_at_all", "py_io.dat", o, B) for o in blocks] + \
            [("MPI_File_read_at_all", "py_io.dat", o, B) for o in blocks], f"rank {r}"
    data = (run.data_dir / "py_io.dat").read_bytes()
    assert data == b"".join(content(r, s, B) for s in range(S) for r in range(NP))


# ----------------------------------------------------------- usage errors

def test_bad_arguments_give_the_usage(build_dir, tmp_path, tmp_path_factory):
    """COUNT (STEPS) 0: the usage on stderr, exit status 2 on every rank, no
    MPI_Abort, no file.  (mpirun takes over a second to report a non-zero
    status: the three run side by side, each with a session directory of its
    own: mpiruns started together on one node race to make and remove the
    shared one, "A call to mkdir was unable to create the desired directory",
    open-mpi/ompi#8510.)"""
    cmds = {"fpp_io": [build_dir / "fpp_io"], "random_io": [build_dir / "random_io"],
            "py_io": [sys.executable, EXAMPLES / "py_io.py"]}
    procs = {prog: subprocess.Popen(
                 mpirun(2, *cmd, tmp_path, 4, 0,
                        mca=[("orte_tmpdir_base", tmp_path_factory.mktemp(f"session-{prog}"))]),
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for prog, cmd in cmds.items()}
    for prog, proc in procs.items():
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (prog, err)
        assert f"{prog}: usage: " in err, (prog, err)
        assert "MPI_ABORT" not in err, (prog, err)
    assert os.listdir(tmp_path) == []
