"""Phases as the I/O libraries make them (issue 59): programs built against
Debian's parallel HDF5, traced under mpirun, modelled and turned into IOR
commands, against what each program does by hand."""
import json
import os
import subprocess

from conftest import IOMODEL, mpirun


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
