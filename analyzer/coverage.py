"""What a trace lacks: rank files missing or empty, ranks without events where
others have them, ranks whose tracing stopped early (a full disk), damage read
past (--partial), stdio bytes moved
by calls the tracer does not see (an inlined getc_unlocked). Every command that
reads a trace says so, and a model built from it is marked partial
(docs/model-format.md, `source.partial`)."""
import os

import numpy as np

from iomodel.models import format_ranks

from .linking import latest_at_or_before


def missing_ranks(n, present):
    """The ranks of 0..n-1 not in `present` as format_ranks writes them
    ('2,5-9'), and how many; from the ranks present, never by listing 0..n-1:
    a damaged header may claim 2^31 ranks."""
    have = sorted(k for k in set(present) if 0 <= k < n)
    runs, start = [], 0
    for k in have + [n]:
        if k > start:
            runs.append(str(start) if k - 1 == start else f"{start}-{k - 1}")
        start = k + 1
    return ",".join(runs), n - len(have)


class Coverage:
    """Fed each rank's trace as it is read (`add`), then `partial()`."""

    def __init__(self):
        self.events, self.stopped, self.end, self.nranks = {}, {}, {}, set()
        self.damaged = set()
        self.lost = {}
        self.inexact = {}       # rank -> its accesses through views not decoded exactly
        self.unseen = {}        # rank -> {path: [bytes moved ahead, bytes moved back]}
        self.empty = set()      # ranks whose files are empty
        self.damage = []        # damage read past: what comes before it is kept
        self.paths = {}         # rank -> the path its trace was read from

    def add(self, r, damaged=False):
        """A rank's trace; damaged: read up to damage, which its reader reports."""
        self.events[r.rank] = len(r.events)
        self.paths[r.rank] = r.path
        if damaged:
            self.damaged.add(r.rank)
        self.nranks.add(r.nranks)
        self.end[r.rank] = r.end
        if r.stopped:
            self.stopped[r.rank] = r.stopped
        if getattr(r, "lost_before_start", None) is not None:
            self.lost[r.rank] = r.lost_before_start
        if getattr(r, "unseen", None):
            opens = latest_at_or_before([o["slot"] for o in r.opens], [o["seq"] for o in r.opens],
                                        np.array([u["slot"] for u in r.unseen], np.int64),
                                        np.array([u["seq"] for u in r.unseen], np.int64))
            moves = self.unseen.setdefault(r.rank, {})
            for u, k in zip(r.unseen, opens.tolist()):
                m = moves.setdefault(r.opens[k]["path"] if k >= 0 else "?", [0, 0])
                m[u["moved"] < 0] += abs(u["moved"])

    def add_empty(self, ranks):
        """Ranks whose trace files are empty: stopped after their tracer created
        the file, before it wrote anything."""
        self.empty |= set(ranks)

    def add_damage(self, errors):
        """Damage a partial read went past (TraceErrors): said, and its ranks'
        missing events put down to it."""
        self.damage += [str(e) for e in errors]
        where = {e.path for e in errors}
        self.damaged |= {k for k, p in self.paths.items() if p in where}

    def merge(self, other):
        """Add what another Coverage was fed (another part of the job's ranks)."""
        self.events.update(other.events)
        self.stopped.update(other.stopped)
        self.end.update(other.end)
        self.nranks |= other.nranks
        self.damaged |= other.damaged
        self.lost.update(other.lost)
        self.inexact.update(other.inexact)
        self.unseen.update(other.unseen)
        self.paths.update(other.paths)
        self.empty |= other.empty
        self.damage += other.damage

    def approximations(self):
        """Sentences for what the model takes as approximate: accesses through
        views whose filetype could not be flattened."""
        if not self.inexact:
            return []
        ranks = sorted(self.inexact)
        return [f"{sum(self.inexact.values())} accesses of rank{'s' * (len(ranks) > 1)} "
                f"{format_ranks(ranks)} went through file views whose filetype was not flattened (more "
                "pieces than the analyzer holds at once, typemap.MAX_BLOCKS, or not enough memory): "
                "they are taken as contiguous ranges from their first byte"]

    def partial(self):
        """None for a whole trace; else {missing_ranks, empty_ranks,
        stopped_ranks, unended_ranks (rank lists or None), notes (one sentence each)}."""
        n = max(self.nranks, default=0)
        missing, n_missing = missing_ranks(n, self.events)
        # without events, though others have some: not a rank whose disk filled before its first chunk
        empty = sorted(k for k, e in self.events.items()
                       if e == 0 and k not in self.stopped and k not in self.damaged) \
            if any(self.events.values()) else []
        notes = []
        if len(self.nranks) > 1:
            notes.append(f"the rank files disagree on the number of ranks ({', '.join(map(str, sorted(self.nranks)))})")
        blank = sorted(k for k in self.empty if k not in self.events and 0 <= k < n)
        if blank:
            many = len(blank) > 1
            notes.append(f"rank{'s' * many} {format_ranks(blank)} of {n}: {'their' if many else 'its'} "
                         f"trace file{'s are' if many else ' is'} empty (stopped after the tracer created "
                         f"{'them' if many else 'it'} in MPI_Init, before it wrote anything): "
                         f"{'their' if many else 'its'} I/O is not in the trace")
        absent, n_absent = missing_ranks(n, set(self.events) | self.empty)
        if n_absent:
            many = n_absent > 1
            notes.append(f"no trace file for rank{'s' * many} {absent} of {n}: "
                         f"{'their' if many else 'its'} I/O is not in the trace")
        for d in self.damage:
            notes.append(f"{d}: what comes before the damage is kept")
        if empty:
            notes.append(f"rank{'s' * (len(empty) > 1)} {format_ranks(empty)}: no events while the others have "
                         "some (killed before the tracer wrote its buffer?)")
        for k, st in sorted(self.stopped.items()):
            then = f"the run went on and ended by {self.end[k]}" if self.end.get(k) else \
                "the run went on"
            notes.append(f"rank {k}: tracing stopped after {st['events_kept']} of {st['events_total']} "
                         f"events: {st['error']}; {then}")
        unended = sorted(k for k, e in self.events.items() if e and self.end.get(k) is None and
                         k not in self.damaged and k not in self.stopped)
        if unended:
            many = len(unended) > 1
            notes.append(f"rank{'s' * many} {format_ranks(unended)}: {'their traces have' if many else 'its trace has'}"
                         " no end (killed outright: SIGKILL, a crash, the OOM killer; or still running): "
                         "the calls after the last buffer written out are not in the trace")
        for k, n in sorted(self.lost.items()):
            notes.append(f"rank {k}: the calls before MPI_Init filled the tracer's memory after {n} "
                         "events; the later ones before it were not recorded")
        notes += self._unseen_notes()
        if not notes:
            return None
        lists = {key: format_ranks(v) or None for key, v in
                 (("empty_ranks", empty), ("stopped_ranks", sorted(self.stopped)), ("unended_ranks", unended))}
        return {"missing_ranks": missing or None, **lists, "notes": notes}

    def _unseen_notes(self):
        """One sentence for the stdio bytes no traced call moved, one for the
        moves back no traced call made, over every rank."""
        notes = []
        for way, what in ((0, "stdio calls the tracer does not see (inlined by the compiler, such as "
                              "getc_unlocked and putc_unlocked, or not wrapped, such as putw and the "
                              "wide-character calls) moved {n} B on {files}: those bytes are not in the trace"),
                          (1, "the position of {files} went back {n} B with no traced stdio call")):
            ranks = sorted(k for k, m in self.unseen.items() if any(v[way] for v in m.values()))
            if not ranks:
                continue
            paths = sorted({p for k in ranks for p, v in self.unseen[k].items() if v[way]})
            n = sum(v[way] for k in ranks for v in self.unseen[k].values())
            names = ", ".join(os.path.basename(p) for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
            files = f"{len(paths)} files ({names})" if len(paths) > 1 else paths[0]
            notes.append(f"rank{'s' * (len(ranks) > 1)} {format_ranks(ranks)}: " + what.format(n=n, files=files))
        return notes
