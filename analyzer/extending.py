"""Which writes of a phase extend their file when its processes go in lockstep.

On a file system that commits a file's size before a write past its end
returns (ext4 mounted `sync`, docs/accuracy.md), such a write costs a journal
commit that every write in flight waits for.  How many of a phase's writes
pass the file's end is a property of its layout: with every process making
its k-th write in round k, the processes of a round in rank order, a write
extends the file when its end passes the file's end before the phase and
every end before it.  IOR's segmented layout with blocks of k transfers
extends it with (np + k - 1) / (np k) of its writes (`ior_share`), so the
replay can match the application's share with its block size.

A phase's writes come as a matrix, a row a process in rank order and a
column a round (the k-th write of each), of their ends.  The processes may be
spread over blocks (the analyzer's workers, each with a run of ranks): each
block gives its rounds' maxima (`round_maxima`), the analyzer turns them into
each block's thresholds (`block_thresholds`), and each block counts its own
(`count_extending`).
"""
import numpy as np


def round_maxima(ends):
    """Each round's highest end among the rows `ends` (processes x rounds)."""
    return ends.max(axis=0)


def block_thresholds(file_end, maxima):
    """Per block (in rank order), per round: the file's end before the block's
    first process makes its write of that round: the end before the phase,
    every earlier round's writes and this round's of the blocks before.
    `maxima`: each block's round_maxima, all of one length."""
    if not maxima:
        return []
    m = np.vstack(maxima)
    rounds = m.max(axis=0)
    before = np.maximum.accumulate(np.r_[file_end, rounds[:-1]])      # rounds 0 .. k-1, and the file
    out, within = [], np.full(m.shape[1], np.iinfo(np.int64).min)
    for row in m:
        out.append(np.maximum(before, within))
        within = np.maximum(within, row)
    return out


def count_extending(ends, thresholds):
    """How many writes of the rows `ends` (processes x rounds, in rank order)
    extend the file, given the block's `thresholds` (block_thresholds)."""
    if not ends.size:
        return 0
    # the file's end when row r writes in round k: the threshold, or a row before it in that round
    prior = np.maximum.accumulate(np.vstack([thresholds, ends[:-1]]), axis=0)
    return int(np.count_nonzero(ends > prior))


def lockstep_share(ends, file_end=-1):
    """The share of the writes `ends` (processes x rounds) that extend the
    file in lockstep, the processes in one block."""
    if not ends.size:
        return None
    t = block_thresholds(file_end, [round_maxima(ends)])[0]
    return count_extending(ends, t) / ends.size


def ior_share(np_, k):
    """The share of IOR's writes that extend the file in lockstep, with
    blocks of k transfers a process and segment: in each segment every
    process's first write, then only the last process's."""
    return (np_ + k - 1) / (np_ * k)
