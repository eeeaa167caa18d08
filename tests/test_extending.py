"""Which writes extend their file in lockstep (analyzer/extending.py): worked
out by hand on IOR's layouts, and against the rule itself, write by write."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from iomodel.analyzer.extending import block_thresholds, count_extending, lockstep_share, round_maxima
from iomodel.replay.ior import ior_share


def ior_ends(np_, k, segments, t=8):
    """IOR's segmented layout: process r's j-th transfer of segment s at
    ((s np + r) k + j) t; a row a process, its writes in call order."""
    return np.array([[((s * np_ + r) * k + j) * t + t for s in range(segments) for j in range(k)]
                     for r in range(np_)], np.int64)


def by_the_rule(ends, file_end=-1):
    """Write by write: round k, rank order; a write extends the file when its end passes the file's."""
    n = 0
    for k in range(ends.shape[1]):
        for r in range(ends.shape[0]):
            if ends[r, k] > file_end:
                n += 1
                file_end = ends[r, k]
    return n


def test_iors_blocks_of_two_transfers():
    # np 4, blocks of 2, 2 segments: in each segment round 0 all 4 extend, round 1
    # only rank 3 (its block is the last): 5 of 8 a segment, 10 of 16
    ends = ior_ends(4, 2, 2)
    assert count_extending(ends, block_thresholds(-1, [round_maxima(ends)])[0]) == 10
    assert lockstep_share(ends) == 10 / 16 == ior_share(4, 2)


def test_iors_layout_of_one_transfer_a_block_extends_with_every_write():
    assert lockstep_share(ior_ends(4, 1, 3)) == 1.0 == ior_share(4, 1)


def test_a_block_per_process_extends_once_a_round_after_the_first():
    # rank r writes 6 transfers in its own block: round 0 all 4, rounds 1-5 rank 3 only
    ends = ior_ends(4, 6, 1)
    assert count_extending(ends, block_thresholds(-1, [round_maxima(ends)])[0]) == 4 + 5


def test_written_again_nothing_extends():
    ends = ior_ends(4, 2, 2)
    assert lockstep_share(ends, file_end=int(ends.max())) == 0.0


def test_ranks_in_reverse_order():
    # rank r at (3 - r) t, one write each: rank 0 writes last byte first, and then nothing passes it
    ends = np.array([[32], [24], [16], [8]], np.int64)
    assert lockstep_share(ends) == 0.25


def test_blocks_of_ranks_count_as_one():
    # ranks 0-1 in one block, 2-3 in another: the same count as all four in one
    ends = ior_ends(4, 2, 2)
    t = block_thresholds(-1, [round_maxima(ends[:2]), round_maxima(ends[2:])])
    assert count_extending(ends[:2], t[0]) + count_extending(ends[2:], t[1]) == 10


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.data())
def test_blocks_agree_with_the_rule(nrows, ncols, data):
    ends = np.array(data.draw(st.lists(st.lists(st.integers(0, 40), min_size=ncols, max_size=ncols),
                                       min_size=nrows, max_size=nrows)), np.int64)
    file_end = data.draw(st.integers(-1, 40))
    cuts = sorted(data.draw(st.sets(st.integers(1, nrows - 1), max_size=nrows - 1)) if nrows > 1 else [])
    blocks = np.split(ends, cuts)
    t = block_thresholds(file_end, [round_maxima(b) for b in blocks])
    assert sum(count_extending(b, x) for b, x in zip(blocks, t)) == by_the_rule(ends, file_end)


@pytest.mark.parametrize("np_,k,share", [(4, 4, 7 / 16), (4, 5, 8 / 20), (2, 3, 4 / 6)])
def test_ior_share(np_, k, share):
    assert ior_share(np_, k) == share == lockstep_share(ior_ends(np_, k, 2))
