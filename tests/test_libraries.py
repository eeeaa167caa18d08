"""Phases as the I/O libraries make them (issue 59): programs built against
Debian's parallel HDF5 and PnetCDF, traced under mpirun, modelled and turned into IOR
commands, against what each program does by hand."""
import json
import os
import subprocess

import pytest

from conftest import IOMODEL, mpirun
from iomodel.analyzer import Trace


def trace_and_model(build_dir, tmp_path, name, np_, *args):
    data, trace, model = tmp_path / "data", tmp_path / "trace", tmp_path / "m.json"
    data.mkdir()
    env = {**os.environ, "IOMODEL_POSIX": "0"}
    p = subprocess.run(IOMODEL + ["trace", "-o", str(trace), "--", *mpirun(np_, build_dir / name, data, *args)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run(IOMODEL + ["analyze", str(trace), "-o", str(model), "-q"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(model.read_text()), model


def test_hdf5_collective_dumps_stay_collective(library_build_dir, tmp_path):
    """h5_steps, 4 ranks, a 256 x 256 grid of doubles, 5 dumps: each rank writes
    its 64 rows (64 * 256 * 8 = 131072 B) of each dump with one collective
    write, then reads them back the same way. HDF5 places its own metadata
    between the datasets, so the offsets are irregular, but the phases are the
    two collective patterns, in order (strided: each dataset after the one
    before), and IOR replays them collective (-c) as five segments, one a
    dataset, never shuffled (-z); the library's metadata, written at close
    by independent calls, is a small phase of its own."""
    m, path = trace_and_model(library_build_dir, tmp_path, "h5_steps", 4, 256, 5)
    data = [(p["routine"], p["np"], p["rs"], p["rep"], p["weight"]) for p in m["phases"][:2]]
    assert data == [("MPI_File_write_at_all", 4, 131072, 5, 5 * 4 * 131072),
                    ("MPI_File_read_at_all", 4, 131072, 5, 5 * 4 * 131072)]
    assert all(p["collective"] for p in m["phases"][:2])
    # the datasets 524288 B each, the first at 2048, the others past metadata
    assert [(p["access_mode"], p["offsets"]["first"], p["offsets"]["per_rank"], p["offsets"]["stride"])
            for p in m["phases"][:2]] == [("strided", 2048, 131072, None)] * 2
    meta = m["phases"][2:]
    assert [p["routine"] for p in meta] == ["MPI_File_write_at"] and not meta[0]["collective"]
    assert meta[0]["weight"] < 4096
    p = subprocess.run(IOMODEL + ["ior", str(path)], capture_output=True, text=True, check=True)
    lines = [line for line in p.stdout.splitlines() if line.startswith("mpirun")]
    assert lines[0] == "mpirun -np 4 ior -a MPIIO -s 5 -b 131072 -t 131072 -c -w -o ./iomodel.h5_steps.1"
    assert lines[1] == "mpirun -np 4 ior -a MPIIO -s 5 -b 131072 -t 131072 -c -w -r -o ./iomodel.h5_steps.2"


def test_hdf5_metadata_between_datasets_does_not_split_them(library_build_dir, tmp_path):
    """h5_steps with "reopen" (a restart): the file is closed after the five
    dumps and opened again to read them back. Before each dataset's
    collective read, HDF5 reads that dataset's object header (its speculative
    512-byte read, H5O's first read of a header), independently on every
    process: 512 B between reads of 131072 B. These are the library's
    metadata (at most 4096 B and 8 times smaller than the data around them:
    docs/commands/analyze.md): they form a phase of their own, and the five
    collective reads stay one phase of rep 5 instead of five phases of rep 1.
    The first dataset's header comes with the file's first reads at open."""
    m, _ = trace_and_model(library_build_dir, tmp_path, "h5_steps", 4, 256, 5, "reopen")
    ph = m["phases"]
    data = [(p["routine"], p["np"], p["rs"], p["rep"], p["weight"], p.get("metadata"))
            for p in ph if p["rs"] == 131072]
    assert data == [("MPI_File_write_at_all", 4, 131072, 5, 5 * 4 * 131072, None),
                    ("MPI_File_read_at_all", 4, 131072, 5, 5 * 4 * 131072, None)]
    meta = [p for p in ph if p.get("metadata")]
    assert [(p["routine"], p["np"], p["request_sizes"], p["rep"], p["collective"]) for p in meta] == \
        [("MPI_File_read_at", 4, [512], 4, False)]
    # the rest: the library's writes at close and reads at open, not between data
    rest = [p for p in ph if p["rs"] != 131072 and not p.get("metadata")]
    assert [p["routine"] for p in rest] == ["MPI_File_write_at", "MPI_File_read_at"]
    assert all(s <= 4096 for p in rest for s in p["request_sizes"])
    assert len(ph) == 5


@pytest.mark.parametrize("xfer", ["independent", "collective"])
def test_hdf5_metadata_at_close_stays_apart(library_build_dir, tmp_path, xfer):
    """h5_ior, 4 ranks, as `ior -a HDF5 -w -s 1 -b 4m -t 1m` (and -c): each
    rank writes its 4 MiB block of one contiguous dataset in four 1 MiB
    transfers, rank r's at dataset byte r * 4 MiB + j * 1 MiB, and closes.
    At H5Fclose the library writes its metadata (superblock, object headers)
    from every rank: a few small writes each, through MPI_File_write_at, the
    data's own routine when its transfers are independent.  They are not the
    data's pattern: the data is one phase of 1 MiB x 4 on every rank (was one
    7-operation repetition of 4 MiB + 232 B on rank 0), replayed as IOR's
    -s 1 -b 4194304 -t 1048576; the metadata, every request under 4 KiB, is a
    phase of its own (marked `metadata` where it followed data of its own
    routine), and the weights add up to every byte written."""
    m, path = trace_and_model(library_build_dir, tmp_path, "h5_ior", 4, 1, 4 << 20, 1 << 20,
                              *(["collective"] if xfer == "collective" else []))
    routine = "MPI_File_write_at_all" if xfer == "collective" else "MPI_File_write_at"
    data, meta = m["phases"][0], m["phases"][1:]
    assert (data["routine"], data["np"], data["request_sizes"], data["rep"], data["weight"],
            data["access_mode"]) == (routine, 4, [1 << 20], 4, 4 * 4 * (1 << 20), "sequential")
    # the dataset's first byte is at 2048 in the file (Debian 12's HDF5 1.10 places it so)
    assert (data["offsets"]["first"], data["offsets"]["per_rank"]) == (2048, 4 << 20)
    assert meta and all(p["routine"] == "MPI_File_write_at" and p["rs"] < 4096 for p in meta)
    assert all(p.get("metadata") for p in meta) == (xfer == "independent")
    written = sum(e["bytes"] for e in Trace(tmp_path / "trace").events.to_pylist()
                  if e["routine"].startswith("MPI_File_write"))
    assert m["weight"] == written and sum(p["weight"] for p in meta) == written - (16 << 20)
    p = subprocess.run(IOMODEL + ["ior", str(path)], capture_output=True, text=True, check=True)
    lines = [line for line in p.stdout.splitlines() if line.startswith("mpirun")]
    assert lines[0] == "mpirun -np 4 ior -a MPIIO -s 1 -b 4194304 -t 1048576 " + \
        ("-c " if xfer == "collective" else "") + "-w -o ./iomodel.h5_ior.1"


# The CDF-5 header of pnc_s3d's files, by the format's specification: magic 4,
# numrecs 8; dim_list: tag 4 + count 8, each dimension name (count 8 + name
# padded to 4) and length 8: z, y, x, nsp 20 each, three 24 -> 116; gatt_list
# absent 12; var_list: tag 4 + count 8, each variable name (8 + padded), ndims
# 8, dimids 8 each, vatt_list absent 12, nc_type 4, vsize 8, begin 8:
# yspecies 88, u 84, pressure 80, temperature 84 -> 348.  4+8+116+12+348 = 488.
CDF5_HEADER = 488
PNC_ALIGN = 512          # PnetCDF's default alignment of the first variable
PNC_HDR_CHUNK = 262144   # PnetCDF reads a header in chunks of this (hint nc_header_read_chunk_size)


@pytest.mark.parametrize("mode", ["blocking", "nonblocking"])
def test_pnetcdf_s3d_checkpoints(library_build_dir, tmp_path, mode):
    """pnc_s3d, 4 ranks (2 x 2 x 1), N = 16, 5 checkpoints, S3D-IO's four
    variables: each checkpoint file is rank 0's header write (488 B, the
    library's, through the job's open) and one collective phase of 131072 B a
    process (yspecies 90112, u 24576, pressure and temperature 8192 each),
    through views of pieces of 704, 192, 64 and 64 B (mean 256); blocking
    put_vara_all gives 4 collective writes a process, the nonblocking iput +
    wait_all one. The restart's read of the last file: rank 0's header chunk,
    then the same collective pattern."""
    m, path = trace_and_model(library_build_dir, tmp_path, "pnc_s3d", 4, mode)
    sizes = [90112, 24576, 8192, 8192] if mode == "blocking" else [131072]
    header = ("MPI_File_write_at", "0", [CDF5_HEADER], 1, CDF5_HEADER, 0, None, False)
    data = ("MPI_File_write_at_all", "0-3", sizes, 1, 4 * 131072, PNC_ALIGN, 256, True)
    got = [(p["routine"], p["ranks"], p["request_sizes"], p["rep"], p["weight"], p["offsets"]["first"],
            p["offsets"].get("piece"), p["collective"]) for p in m["phases"]]
    assert got == [header, data] * 5 + [
        ("MPI_File_read_at", "0", [PNC_HDR_CHUNK], 1, PNC_HDR_CHUNK, 0, None, False),
        ("MPI_File_read_at_all", "0-3", sizes, 1, 4 * 131072, PNC_ALIGN, 256, True)]
    # ranks' first pieces: x0 * 11 * 8 and y0 * N * 11 * 8 into yspecies
    assert m["phases"][1]["offsets"]["starts"] == [0, 704, 11264, 11968]
    assert [p["file"] for p in m["phases"][:10:2]] == [0, 1, 2, 3, 4]
    assert [(f["access_type"], f["extent"]) for f in m["files"]] == [("shared", PNC_ALIGN + 4 * 131072)] * 5
    # IOR: one run a checkpoint file, as the paper's Table IX, collective
    p = subprocess.run(IOMODEL + ["ior", str(path)], capture_output=True, text=True, check=True)
    runs = [line for line in p.stdout.splitlines() if line.startswith("mpirun") and " -c " in line]
    assert [" ".join(r.split()[3:14]) for r in runs[:5]] == \
        ["ior -a MPIIO -s 1 -b 131072 -t 131072 -c -w"] * 5


# pnc_s3d "record": a dimension "time" more in the header (count 8 + name 4 +
# length 8 = 20) and one more dimid a variable (4 * 8): 488 + 20 + 32 = 540 B;
# the records begin at 540 rounded up to the alignment, 1024; a record holds
# each variable's record in turn, N^3 * (11 + 3 + 1 + 1) * 8 = 524288 B at N = 16.
CDF5_RECORD_HEADER = 540
RECORDS_BEGIN = 1024
RECORD = 524288


@pytest.mark.parametrize("mode", ["blocking", "nonblocking"])
def test_pnetcdf_record_variables(library_build_dir, tmp_path, mode):
    """pnc_s3d "record", 4 ranks, N = 16, 5 checkpoints into one file, each
    the next record of S3D-IO's four variables (as a netCDF time series): the
    solver's steps between checkpoints make each record's collective write a
    phase of its own (rep 1, as the paper's BT-IO phases), at RECORDS_BEGIN +
    i * RECORD. When a write adds a record, PnetCDF's rank 0 writes the new
    record count (numrecs, 8 B at byte 4 of a CDF-5 file): blocking, after
    the first variable's put_vara_all, between data writes, so it is the
    library's metadata, a small phase of its own each record; nonblocking,
    after wait_all's one write, so the last one, followed by the restart's
    header read and not by data, is not between data and not marked. The
    restart reads record 4 back."""
    m, _ = trace_and_model(library_build_dir, tmp_path, "pnc_s3d", 4, mode, 16, 5, "record")
    sizes = [90112, 24576, 8192, 8192] if mode == "blocking" else [131072]

    def data(routine, i):
        return (routine, "0-3", sizes, 1, 4 * 131072, RECORDS_BEGIN + i * RECORD, 256, True, None)
    numrecs = ("MPI_File_write_at", "0", [8], 1, 8, 4, None, False, True)
    last = numrecs if mode == "blocking" else numrecs[:-1] + (None,)
    want = [("MPI_File_write_at", "0", [CDF5_RECORD_HEADER], 1, CDF5_RECORD_HEADER, 0, None, False, None)]
    for i in range(5):
        want += [data("MPI_File_write_at_all", i), numrecs if i < 4 else last]
    want += [("MPI_File_read_at", "0", [PNC_HDR_CHUNK], 1, PNC_HDR_CHUNK, 0, None, False, None),
             data("MPI_File_read_at_all", 4)]
    got = [(p["routine"], p["ranks"], p["request_sizes"], p["rep"], p["weight"], p["offsets"]["first"],
            p["offsets"].get("piece"), p["collective"], p.get("metadata")) for p in m["phases"]]
    assert got == want
    # every record's pieces start where the fixed-size file's did, within yspecies
    assert {tuple(p["offsets"]["starts"]) for p in m["phases"] if p["np"] == 4} == {(0, 704, 11264, 11968)}
    assert [(f["access_type"], f["extent"]) for f in m["files"]] == [("shared", RECORDS_BEGIN + 5 * RECORD)]


B = 131072        # a rank's 64 rows of 256 doubles, each dump


@pytest.mark.parametrize("variant", ["independent", "chunked", "independent chunked"])
def test_hdf5_independent_and_chunked_dumps(library_build_dir, tmp_path, variant):
    """h5_steps as above, 4 ranks, 5 dumps, each rank's 131072 B a dump:
    - independent: H5FD_MPIO_INDEPENDENT, so each dump is one MPI_File_write_at
      a rank: one independent phase of rep 5, read back the same way;
    - chunked (one chunk a rank, collective): parallel HDF5 allocates a chunked
      dataset's space when it creates it and writes the chunks' fill values
      then, collectively; the data follows at the same offsets: one collective
      phase of rep 10 (fill, data, 5 times), in order (a range gone over again
      is not random), and the reads a phase of rep 5;
    - independent chunked: the fills collective, the data independent, in turn:
      10 phases of rep 1, then the independent reads of rep 5.
    Whatever else there is is the library's metadata (under 4 KiB an operation)."""
    m, _ = trace_and_model(library_build_dir, tmp_path, "h5_steps", 4, 256, 5, *variant.split())
    got = [(p["routine"], p["np"], p["rs"], p["rep"], p["access_mode"], p["collective"])
           for p in m["phases"] if p["rs"] == B]
    fill = ("MPI_File_write_at_all", 4, B, 1, "sequential", True)
    data = ("MPI_File_write_at", 4, B, 1, "sequential", False)
    want = {"independent": [("MPI_File_write_at", 4, B, 5, "strided", False),
                            ("MPI_File_read_at", 4, B, 5, "strided", False)],
            "chunked": [("MPI_File_write_at_all", 4, B, 10, "strided", True),
                        ("MPI_File_read_at_all", 4, B, 5, "strided", True)],
            "independent chunked": [fill, data] * 5 + [("MPI_File_read_at", 4, B, 5, "strided", False)]}
    assert got == want[variant]
    reads = [p for p in m["phases"] if p["rs"] == B and p["operation"] == "read"]
    assert reads[0]["reread_bytes"] == 5 * 4 * B         # through the writes' open
    assert all(s <= 4096 for p in m["phases"] if p["rs"] != B for s in p["request_sizes"])
