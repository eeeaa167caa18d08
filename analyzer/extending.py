"""Which writes of a phase extend their file when its processes go in lockstep.

On a file system that commits a file's size before a write past its end
returns (ext4 mounted `sync`, docs/accuracy.md), such a write costs a journal
commit that every write in flight waits for.  How many of a phase's writes
pass the file's end is a property of its layout: with every process making
its k-th write in round k, the processes of a round in rank order, a write
extends the file when its end passes the file's end before the phase and
every end before it.  IOR's segmented layout with blocks of k transfers
extends it with (np + k - 1) / (np k) of its writes (replay/ior.py
ior_share), so the replay can match the application's share with its block
size.

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


def qualifying(n, shared):
    """The phases whose share is counted: independent writes of known offsets
    by several processes to a shared file, each process making as many; and
    per phase, the file's end before it: the highest end of the file's write
    phases that started earlier, since the last phase before which a process
    deleted or truncated the file (`fresh`); -1: none.  `n`: the phases'
    numbers (analyzer/phases.py phase_numbers, with the lowest rank's `first_`)."""
    group, write, t0, end = n["first_group"], n["first_write"].astype(bool), n["t0"], n["end_hi"]
    fresh = n["fresh"].astype(bool)
    file_end = np.full(len(group), -1, np.int64)
    for g in np.unique(group[write]).tolist():
        mine = np.flatnonzero(group == g)
        order = mine[np.argsort(t0[mine], kind="stable")]
        # the file's lives: a new one at each phase a process deleted or truncated it before
        starts = np.unique(np.r_[0, np.flatnonzero(fresh[order])])
        for a, b in zip(starts, np.r_[starts[1:], len(order)]):
            life = order[a:b]
            highest = np.maximum.accumulate(np.where(write[life], end[life], -1))
            before = np.searchsorted(t0[life], t0[life], side="left")     # phases that started earlier
            file_end[life] = np.where(before > 0, highest[np.maximum(before - 1, 0)], -1)
    need = write & (n["coll_hi"] == 0) & (n["known"] == 1) & (n["count"] > 1) & shared[group] & \
        (n["nops_lo"] == n["nops_hi"])
    return np.flatnonzero(need), file_end


def phase_ends(stash, at, nops):
    """The ends of one phase's writes as processes x rounds: each process's
    run of `nops` in the stash from `at` (its bursts in rank order)."""
    return stash[at[:, None] + np.arange(nops)]
