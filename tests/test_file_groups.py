"""The files of a job, from each rank's opens and accesses (ops.rank_file_rows)
to the model's file groups, their extents and their processes
(phases.file_groups, phases._file_stats): hand-built ranks, hand-worked
groups.  The traced programs of test_analyzer.py check the same rules end to
end; this checks the vectorised reduction on a case with every kind of row.
"""
from types import SimpleNamespace

import numpy as np

from iomodel.analyzer.ops import rank_file_rows
from iomodel.analyzer.phases import _file_stats, file_groups

PATHS = ["out.0.dat", "out.1.dat", "shared.dat", "log.txt", "common.dat", "lost.dat"]


def ranks():
    # single: path -> opened on one-process communicators only; extent: accessed paths
    return [
        SimpleNamespace(rank=0, single={0: True, 2: False}, extent={0: 100, 2: 4096}),
        # log.txt opened, never accessed; common.dat opened alone by two ranks
        SimpleNamespace(rank=1, single={1: True, 2: False, 3: True, 4: True},
                        extent={1: 50, 2: 8192, 4: 30}),
        # lost.dat accessed with no open seen: no group holds it
        SimpleNamespace(rank=2, single={2: False, 4: True}, extent={2: 10, 4: 7, 5: 99}),
    ]


def test_rank_file_rows():
    rows = rank_file_rows(ranks())
    assert rows["rank"].tolist() == [0, 0, 1, 1, 1, 1, 2, 2, 2]
    assert rows["path"].tolist() == [0, 2, 1, 2, 3, 4, 2, 4, 5]
    assert rows["single"].tolist() == [1, 0, 1, 0, 1, 1, 0, 1, -1]
    assert rows["accessed"].tolist() == [True, True, True, True, False, True, True, True, True]
    assert rows["extent"].tolist() == [100, 4096, 50, 8192, -1, 30, 10, 7, 99]


def test_groups_extents_and_processes():
    ops = SimpleNamespace(paths=PATHS, file_rows=rank_file_rows(ranks()))
    of_path, groups = file_groups(ops)
    # by name: common.dat (two ranks: shared), out.{rank}.dat (each one rank's
    # own), shared.dat; log.txt (not accessed) and lost.dat (not opened) in none
    assert groups == [{"name": "common.dat", "paths": ["common.dat"], "unique": False},
                      {"name": "out.{rank}.dat", "paths": ["out.0.dat", "out.1.dat"], "unique": True},
                      {"name": "shared.dat", "paths": ["shared.dat"], "unique": False}]
    assert of_path.tolist() == [1, 1, 2, -1, 0, -1]
    extent, nprocs = _file_stats(ops, of_path, len(groups))
    assert extent.tolist() == [30, 100, 8192]
    assert nprocs.tolist() == [2, 2, 3]


def test_no_file_accessed():
    ops = SimpleNamespace(paths=["a"], file_rows=rank_file_rows(
        [SimpleNamespace(rank=0, single={0: True}, extent={})]))
    of_path, groups = file_groups(ops)
    assert (of_path.tolist(), groups) == ([-1], [])
    extent, nprocs = _file_stats(ops, of_path, 0)
    assert (len(extent), len(nprocs)) == (0, 0)
    assert rank_file_rows([])["rank"].dtype == np.int64
