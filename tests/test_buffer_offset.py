"""Where an application's buffers sat within 4 KiB, from the trace to the
prediction: the tracer records it, the analyzer gives each phase its
`buffer_offset`, the replay places its buffer there and the profile answers
from points measured so (docs/model-format.md, docs/commands/predict.md).

tests/programs/buffers.c moves its data from buffers 16, 16, 100, 0, 2048, 100
and 16 bytes past a 4 KiB boundary (a page-aligned region plus those offsets),
in seven calls A to G whose routines make five phases."""
from pathlib import Path

import pytest

from conftest import rank_events
from iomodel.models import ModelError, validate
from iomodel.replay.backends import get_backend
from iomodel.replay.ior import ior_invocations
from iomodel.cluster.profile import Profile, ProfileError, summary

NP = 2
KIB = 1024


@pytest.fixture
def buffers_run(traced):
    return traced("buffers", NP)


def test_the_tracer_records_each_calls_buffer_offset(buffers_run):
    trace = buffers_run.trace()
    for rank, evs in rank_events(trace).items():
        data = [(e["routine"], e["buffer_offset"]) for e in evs if e["data"]]
        assert data == [("MPI_File_write_at", 16), ("MPI_File_write_at", 16),
                        ("MPI_File_read_at", 100), ("MPI_File_iwrite_at", 0),
                        ("MPI_File_write_at_all_begin", 2048), ("MPI_File_read_at", 100),
                        ("MPI_File_read_at", 16)], f"rank {rank}"
        # no offset where no data moves: the open, the Wait, the _end, the close
        assert {e["buffer_offset"] for e in evs if not e["data"]} == {None}
    # one record where the offset changes (B reuses A's buffer): 6 per rank
    assert [len(r.buffers) for r in trace._rank_traces()] == [6] * NP


def test_each_phase_has_its_buffers_offset(buffers_run):
    """A+B (write_at, both at 16), C (read_at, 100), D (iwrite_at, 0), E
    (write_at_all_begin, 2048), F+G (read_at at 100 and 16: no one offset)."""
    from iomodel.analyzer import analyze
    model = analyze(buffers_run.trace_dir)
    got = [(p["routine"], p["rep"], p.get("buffer_offset")) for p in model["phases"]]
    assert got == [("MPI_File_write_at", 2, 16), ("MPI_File_read_at", 1, 100),
                   ("MPI_File_iwrite_at", 1, 0), ("MPI_File_write_at_all_begin", 1, 2048),
                   ("MPI_File_read_at", 2, None)]
    bad = dict(model, phases=[dict(model["phases"][0], buffer_offset=4096)] + model["phases"][1:])
    with pytest.raises(ModelError) as e:
        validate(bad)
    assert str(e.value) == "phases[0].buffer_offset: expected an integer from 0 to 4095, got 4096"


def test_the_builtin_replay_places_its_buffer_as_the_application_did(buffers_run):
    from iomodel.analyzer import analyze
    model = analyze(buffers_run.trace_dir)
    invs = {inv.phase_ids[0]: inv for inv in ior_invocations(model)}
    builtin, ior = get_backend("builtin"), get_backend("ior")
    for pid, want in ((1, 16), (2, 100), (4, 2048)):
        inv = invs[pid]
        assert inv.buffer_offset == want
        argv = builtin.argv(inv, "iomodel_replay", Path("s.json"), 1)
        assert [a for a in argv if a.startswith("--iomodel.bufferOffset")] == \
            [f"--iomodel.bufferOffset={want}"]
        assert not any("bufferOffset" in a for a in ior.argv(inv, "ior", Path("s.json"), 1))
        assert any(f"buffers sat {want} B past a 4 KiB boundary" in n for n in inv.approximations)
    for pid in (3, 5):            # aligned (D), and no one offset (F, G): nothing to place
        inv = invs[pid]
        assert inv.buffer_offset == 0
        assert not any("bufferOffset" in a
                       for a in builtin.argv(inv, "iomodel_replay", Path("s.json"), 1))


def reread_points(aligned_us, placed_us):
    """Two processes rereading 16 x 256 KiB each (and one 256 KiB each), from
    an aligned buffer and from one 16 B past 4 KiB, taking these microseconds."""
    pts = []
    for boff, (t_long, t_one) in ((None, aligned_us), (16, placed_us)):
        for ops, t in ((16, t_long), (1, t_one)):
            pts.append({"operation": "reread", "access_type": "unique", "collective": False,
                        "np": 2, "rs": 256 * KIB, "ops_per_process": ops, "buffer_offset": boff,
                        "bw_Bps": 2 * ops * 256 * KIB / (t * 1e-6), "time_s": t * 1e-6})
    return Profile.from_points(pts)


def test_the_profile_answers_from_points_at_the_phases_offset():
    """Aligned: 16 ops in 346 us, one in 23 us; at +16: 532 and 44 us (the disk
    VC's page cache, measured).  A phase of 16 ops per process takes the long
    point's time at its offset; at an offset not measured, the aligned one."""
    prof = reread_points((346, 23), (532, 44))

    def phase_us(boff):
        bw, note = prof.bandwidth("reread", 2, 256 * KIB, "unique", False, 16, None, boff)
        return round(2 * 16 * 256 * KIB / bw * 1e6, 6), note
    t, note = phase_us(None)
    assert t == pytest.approx(346) and "past 4 KiB" not in note
    t, note = phase_us(16)
    assert t == pytest.approx(532)
    assert note.startswith("buffers 16 B past 4 KiB: points measured so; 16 ops per process")
    t, note = phase_us(8)
    assert t == pytest.approx(346)
    assert note.startswith("buffers 8 B past 4 KiB: no point measured so (characterize "
                           "--buffer-offsets 8), aligned ones used")
    # far from a page boundary the aligned points answer, and nothing is worth measuring
    t, note = phase_us(2928)
    assert t == pytest.approx(346)
    assert note.startswith("buffers 2928 B past 4 KiB: aligned points used (from 32 B on, as fast "
                           "as aligned); 16 ops per process")
    # a write without points measured past a page: the aligned ones, and the note says
    # what to measure (a collective one says nothing: the aggregators' buffers write it)
    wprof = Profile.from_points([{"operation": "write", "access_type": "unique", "collective": c,
                                  "np": 2, "rs": 256 * KIB, "bw_Bps": 2 * 256 * KIB / 1e-3}
                                 for c in (False, True)])
    bw, note = wprof.bandwidth("write", 2, 256 * KIB, "unique", False, None, None, 16)
    assert bw == pytest.approx(2 * 256 * KIB / 1e-3)
    assert note.startswith("buffers 16 B past 4 KiB: no write point measured past a page "
                           "(characterize --buffer-offsets 16), aligned ones used; measured")
    bw, note = wprof.bandwidth("write", 2, 256 * KIB, "unique", True, None, None, 16)
    assert bw == pytest.approx(2 * 256 * KIB / 1e-3) and note == "measured"
    # the peaks are the aligned points' (the long one: 2 x 16 x 256 KiB in 346 us)
    (peak,) = summary(prof)
    assert (peak["points"], peak["peak_Bps"]) == (2, pytest.approx(2 * 16 * 256 * KIB / 346e-6))
    with pytest.raises(ProfileError, match="buffer_offset must be 0 to 4095 bytes, got 4096"):
        Profile.from_points([{"operation": "read", "np": 1, "rs": 4096, "bw_Bps": 1.0,
                              "buffer_offset": 4096}])


def test_a_write_takes_the_points_of_the_nearest_measured_offset():
    """Through Gluster's FUSE mount (direct I/O, 128 KiB requests) a 256 KiB write
    from a buffer 16 B past a page goes as three requests, 131056 + 131072 + 16
    bytes, instead of two: at 300 Mbit/s 15.4 ms a write against 14.7 ms aligned
    (two processes, 16 writes each, one file each; measured on the testbed).  A
    buffer 3232 B past a page spans one more page just the same, so a write
    phase at any offset takes the points measured at the nearest one (16 B);
    a read does not (from 32 B on, copies are as fast as aligned)."""
    pts = [{"operation": op, "access_type": "unique", "collective": False, "np": 2,
            "rs": 256 * KIB, "ops_per_process": 16, "buffer_offset": boff,
            "bw_Bps": 2 * 16 * 256 * KIB / (16 * t * 1e-3), "time_s": 16 * t * 1e-3}
           for op in ("write", "read") for boff, t in ((None, 14.7), (16, 15.4))]
    prof = Profile.from_points(pts)

    def phase_ms(op, boff, collective=False):
        bw, note = prof.bandwidth(op, 2, 256 * KIB, "unique", collective, 16, None, boff)
        return round(2 * 16 * 256 * KIB / bw * 1e3, 6), note
    assert phase_ms("write", None) == (pytest.approx(16 * 14.7), "measured")
    t, note = phase_ms("write", 16)
    assert t == pytest.approx(16 * 15.4)
    assert note == "buffers 16 B past 4 KiB: points measured so; measured"
    t, note = phase_ms("write", 3232)
    assert t == pytest.approx(16 * 15.4)
    assert note == ("buffers 3232 B past 4 KiB: points measured 16 B past used (a write's "
                    "transfers each span one more page at any offset); measured")
    t, note = phase_ms("read", 3232)
    assert t == pytest.approx(16 * 14.7)
    assert note.startswith("buffers 3232 B past 4 KiB: aligned points used (from 32 B on")
    # the points past a page are independent ones: a collective phase takes the aligned
    # ones (the collective flag relaxed, as for any phase without points of its kind)
    t, note = phase_ms("write", 16, collective=True)
    assert t == pytest.approx(16 * 14.7)
    assert note == ("no collective unique points: used unique points of any kind; measured")
