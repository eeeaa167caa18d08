"""What a trace lacks: rank files missing, ranks without events where others
have them, ranks whose tracing stopped early (a full disk). Every command that
reads a trace says so, and a model built from it is marked partial
(docs/model-format.md, `source.partial`)."""
from iomodel.models import format_ranks


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

    def add(self, r, damaged=False):
        """A rank's trace; damaged: read up to damage, which its reader reports."""
        self.events[r.rank] = len(r.events)
        if damaged:
            self.damaged.add(r.rank)
        self.nranks.add(r.nranks)
        self.end[r.rank] = r.end
        if r.stopped:
            self.stopped[r.rank] = r.stopped
        if getattr(r, "lost_before_start", None) is not None:
            self.lost[r.rank] = r.lost_before_start

    def merge(self, other):
        """Add what another Coverage was fed (another part of the job's ranks)."""
        self.events.update(other.events)
        self.stopped.update(other.stopped)
        self.end.update(other.end)
        self.nranks |= other.nranks
        self.damaged |= other.damaged
        self.lost.update(other.lost)
        self.inexact.update(other.inexact)

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
        stopped_ranks (rank lists or None), notes (one sentence each)}."""
        n = max(self.nranks, default=0)
        missing, n_missing = missing_ranks(n, self.events)
        # without events, though others have some: not a rank whose disk filled before its first chunk
        empty = sorted(k for k, e in self.events.items()
                       if e == 0 and k not in self.stopped and k not in self.damaged) \
            if any(self.events.values()) else []
        notes = []
        if len(self.nranks) > 1:
            notes.append(f"the rank files disagree on the number of ranks ({', '.join(map(str, sorted(self.nranks)))})")
        if n_missing:
            many = n_missing > 1
            notes.append(f"no trace file for rank{'s' * many} {missing} of {n}: "
                         f"{'their' if many else 'its'} I/O is not in the trace")
        if empty:
            notes.append(f"rank{'s' * (len(empty) > 1)} {format_ranks(empty)}: no events while the others have "
                         "some (killed before the tracer wrote its buffer?)")
        for k, st in sorted(self.stopped.items()):
            then = f"the run went on and ended by {self.end[k]}" if self.end.get(k) else \
                "the run went on"
            notes.append(f"rank {k}: tracing stopped after {st['events_kept']} of {st['events_total']} "
                         f"events: {st['error']}; {then}")
        for k, n in sorted(self.lost.items()):
            notes.append(f"rank {k}: the calls before MPI_Init filled the tracer's memory after {n} "
                         "events; the later ones before it were not recorded")
        if not notes:
            return None
        lists = {key: format_ranks(v) or None for key, v in
                 (("empty_ranks", empty), ("stopped_ranks", sorted(self.stopped)))}
        return {"missing_ranks": missing or None, **lists, "notes": notes}
