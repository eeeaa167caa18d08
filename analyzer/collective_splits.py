"""Where a collective burst splits: decided by its communicator, not by one process.

Every process of a job's open makes each of its collective operations, so a
burst of them has one extent on all of them.  On its own, a process starts a
new burst before its j-th collective operation of a key (file group,
operation, routine, library metadata or not) when another data operation of
its own sits in between or more communication calls than the threshold do:
that is its wish.  The split is made, on every process, where more than half
of the processes that make the operation wish it.  Where the communicator keeps
a burst whole across a process's own operations (rank 0's log lines between
the job's collective writes), those operations and the burst are cut apart
(phases.py), as library metadata is, so that neither cuts the other.

Only the operations whose processes disagree ("contested") change anything:
where all agree, each process's own rule is the communicator's.
"""
import numpy as np

ORDINAL_BITS = 32          # a vote key: key << ORDINAL_BITS | the operation's ordinal in its key


def votable(ngroups, nroutines):
    """Whether every key fits a vote key (about 2.6 million file groups of 200 routines)."""
    return ngroups * 4 * max(nroutines, 1) < 2 ** (63 - ORDINAL_BITS)


def in_key_order(collective, solo, g, write, routine, is_meta, nroutines):
    """A part's collective operations through the job's open, in key order (by
    key, then call order): (their indices in the part, their vote keys, sorted
    and distinct, which are the first of their key)."""
    at = np.flatnonzero((collective == 1) & ~solo)
    key = ((g[at].astype(np.int64) * 2 + write[at]) * nroutines + routine[at]) * 2 + int(is_meta)
    if len(key) and key.min() != key.max():     # most processes have one key: already in order
        order = np.argsort(key, kind="stable")
        at, key = at[order], key[order]
    first = np.ones(len(at), bool)
    first[1:] = key[1:] != key[:-1]
    n = np.arange(len(at))
    ordinal = n - np.maximum.accumulate(np.where(first, n, 0))
    return at, (key << ORDINAL_BITS) | ordinal, first


def own_wishes(at, first, lclock, threshold):
    """Per operation of in_key_order after the first of its key: does this
    process, on its own, start a new burst there (another data operation in
    between, or more communication calls than the threshold)."""
    prev = np.empty_like(at)
    prev[1:] = at[:-1]
    prev[:1] = -1
    gap = (lclock[at].astype(np.int64) - lclock[prev].astype(np.int64)) % 2 ** 32
    wish = (prev != at - 1) | (gap > threshold)
    wish[first] = True
    return wish, (prev != at - 1) & ~first


class Tally:
    """The processes' votes, added a process at a time: per vote key, the
    wishes to split and the voters.  Most processes make the same collective
    operations: their keys are the first's, and their wishes add up in place."""

    def __init__(self):
        self.keys = self.yes = self.total = None
        self.others = []

    def add(self, keys, wishes):
        """One process's sorted, distinct vote keys and its wishes (or a tally's counts, with `total`)."""
        self.add_counts(keys, wishes.astype(np.int64), np.ones(len(keys), np.int64))

    def add_counts(self, keys, yes, total):
        if not len(keys):
            return
        if self.keys is None:
            self.keys, self.yes, self.total = keys, yes.copy(), total.copy()
        elif len(keys) == len(self.keys) and np.array_equal(keys, self.keys):
            self.yes += yes
            self.total += total
        else:
            self.others.append((keys, yes, total))

    def result(self):
        """(vote keys, sorted; wishes to split; voters)."""
        if self.keys is None:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        if not self.others:
            return self.keys, self.yes, self.total
        parts = [(self.keys, self.yes, self.total)] + self.others
        uniq, inv = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
        return (uniq, *(np.bincount(inv, weights=np.concatenate([p[i] for p in parts]),
                                    minlength=len(uniq)).astype(np.int64) for i in (1, 2)))


def contested(votes):
    """The operations the processes disagree on: (vote keys, sorted; split or not)."""
    uniq, yes, total = votes
    c = (yes > 0) & (yes < total)
    return uniq[c], 2 * yes[c] > total[c]


def decided(keys, wishes, contest):
    """The communicator's split per operation: its decision where contested,
    else the process's own wish (which is every process's)."""
    ckeys, csplit = contest
    pos = np.searchsorted(ckeys, keys).clip(0, max(len(ckeys) - 1, 0))
    hit = (ckeys[pos] == keys) if len(ckeys) else np.zeros(len(keys), bool)
    return np.where(hit, csplit[pos] if len(ckeys) else False, wishes), hit


def spanning(at, split, kept_across):
    """The operations (indices in the part) of bursts kept whole across other
    operations of the process: bursts follow each other in key order, a new
    one at each split."""
    burst = np.cumsum(split)
    return at[np.isin(burst, np.unique(burst[kept_across]))]
