"""Damage aimed at a trace's type records and views (docs/trace-format.md,
metadata records 8 and 3): the descriptions of views' filetypes that the
analyzer flattens (analyzer/typemap.py) only as far as the accesses reach.

A rank file's metadata records are decoded, one to three of them edited (a
type's integers, addresses, children, size, lower bound, extent, combiner or
counts; records dropped, repeated or swapped; a view's etype size,
displacement, filetype size and type reference), and, half the time, every
type's size made what its constructor makes of its children's again, and
each view's filetype size its type's: a description that holds together,
but of a type the application never had (a vector of 2^31 blocks, a
subarray of 2^20 x 2^20 cells), which the reader must take in bounded time
and memory. The chunks' checksums are made good (fuzzing.join_chunks).
"""
import struct

import fuzzing

META = struct.Struct("<IIQ")                     # type, length, event
TYPE = struct.Struct("<IIiiiIqqq")               # id, combiner, ni, na, nd, pad, size, lb, extent
VIEW = struct.Struct("<IIqqqqqQII")              # slot, flags, disp, etype, fsize, flb, fext, blocks, rep, type
T_TYPE, T_VIEW = 8, 3
NAMED, DUP, CONTIGUOUS, VECTOR, HVECTOR, INDEXED, HINDEXED, INDEXED_BLOCK, HINDEXED_BLOCK, STRUCT, \
    SUBARRAY, RESIZED = range(12)
# integers an edit may set: counts, lengths, strides, dimensions, and their edges
INTS = [0, 1, 2, 3, 4, 7, 8, 64, 1000, 4096, 65536, 2 ** 20, 2 ** 24, 2 ** 30, 2 ** 31 - 1, -1, -2, -4096,
        -2 ** 31]
ADDRS = INTS + [2 ** 32, 2 ** 40, 2 ** 62, 2 ** 63 - 1, -2 ** 62, -2 ** 63, 40, 8 << 20]
SIZES = ADDRS + [-32766]                         # MPI_UNDEFINED, a type's size past 2 GiB


def pad8(n):
    return (n + 7) // 8 * 8


def records(payload):
    """A metadata chunk's payload as [[type, event, body]] (what follows a
    record that does not hold together is kept as one last record of type None)."""
    out, pos = [], 0
    while pos + META.size <= len(payload):
        t, n, seq = META.unpack_from(payload, pos)
        if n < META.size or n % 8 or pos + n > len(payload):
            break
        out.append([t, seq, bytearray(payload[pos + META.size:pos + n])])
        pos += n
    if pos < len(payload):
        out.append([None, 0, bytearray(payload[pos:])])
    return out


def join_records(recs):
    out = bytearray()
    for t, seq, body in recs:
        if t is None:
            out += body
        else:
            body = bytes(body) + bytes(-len(body) % 8)
            out += META.pack(t, META.size + len(body), seq % 2 ** 64) + body
    return out


def decode_type(body):
    tid, comb, ni, na, nd, pad, size, lb, ext = TYPE.unpack_from(body)
    li = pad8(4 * ni)
    o = TYPE.size
    return dict(tid=tid, comb=comb, ni=ni, na=na, nd=nd, pad=pad, size=size, lb=lb, ext=ext,
                ints=list(struct.unpack_from(f"<{ni}i", body, o)),
                addrs=list(struct.unpack_from(f"<{na}q", body, o + li)),
                kids=list(struct.unpack_from(f"<{nd}I", body, o + li + 8 * na)))


def encode_type(t, counts=None):
    """The record's body; counts (ni, na, nd) as the header says them, by
    default those of the lists (an edit may make them disagree)."""
    ints, addrs, kids = t["ints"], t["addrs"], t["kids"]
    ni, na, nd = counts or (len(ints), len(addrs), len(kids))
    body = TYPE.pack(t["tid"] % 2 ** 32, t["comb"] % 2 ** 32, _i32(ni), _i32(na), _i32(nd), t["pad"] % 2 ** 32,
                     _i64(t["size"]), _i64(t["lb"]), _i64(t["ext"]))
    body += struct.pack(f"<{len(ints)}i", *map(_i32, ints)) + bytes(pad8(4 * len(ints)) - 4 * len(ints))
    body += struct.pack(f"<{len(addrs)}q", *map(_i64, addrs))
    body += struct.pack(f"<{len(kids)}I", *(k % 2 ** 32 for k in kids)) + bytes(pad8(4 * len(kids)) - 4 * len(kids))
    return bytearray(body)


def _i32(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def _i64(v):
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def constructed_size(t, sizes):
    """The size a type's constructor makes of its children's (MPI 4.0, 5.1),
    or None where the record does not tell (a child not described)."""
    c, v = t["comb"], t["ints"]
    try:
        ch = [sizes[k] for k in t["kids"]]
        n = v[0] if v else 0
        if c == NAMED:
            return t["size"]
        if c in (DUP, RESIZED):
            return ch[0]
        if c == CONTIGUOUS:
            return n * ch[0]
        if c in (VECTOR, HVECTOR):
            return v[0] * v[1] * ch[0]
        if c in (INDEXED, HINDEXED):
            return sum(v[1:1 + n]) * ch[0]
        if c in (INDEXED_BLOCK, HINDEXED_BLOCK):
            return n * v[1] * ch[0]
        if c == STRUCT:
            return sum(b * s for b, s in zip(v[1:1 + n], ch))
        if c == SUBARRAY:
            s = ch[0]
            for x in v[1 + n:1 + 2 * n]:
                s *= x
            return s
    except (IndexError, KeyError, TypeError):
        return None
    return None


def make_sizes_good(recs):
    """Every type's size its constructor's of its children's, in record order,
    and each view's filetype size its type's."""
    sizes = {}
    for r in recs:
        if r[0] == T_TYPE and len(r[2]) >= TYPE.size:
            try:
                t = decode_type(r[2])
            except struct.error:
                continue
            s = constructed_size(t, sizes)
            if s is not None and -2 ** 63 <= s < 2 ** 63:
                struct.pack_into("<q", r[2], 24, s)
                t["size"] = s
            sizes[t["tid"]] = t["size"]
        elif r[0] == T_VIEW and len(r[2]) >= VIEW.size:
            tref = VIEW.unpack_from(r[2])[9]
            if tref and tref - 1 in sizes:
                struct.pack_into("<q", r[2], 24, _i64(sizes[tref - 1]))


def _edit_type(rnd, recs, r):
    try:
        t = decode_type(r[2])
    except struct.error:            # counts an earlier edit made wrong: a field of the header, raw
        fuzzing._poke(r[2], rnd, rnd.choice((8, 12, 16, 24)), 4)
        return
    counts = None
    # mostly edits that keep the record whole, so that the description is read and flattened
    what = rnd.choices(range(9), weights=(6, 4, 1, 4, 1, 1, 1, 0.5, 4))[0]
    if what == 0 and t["ints"]:                     # an integer: a count, a length, a dimension
        i = rnd.randrange(len(t["ints"]))
        t["ints"][i] = rnd.choice(INTS + [t["ints"][i] * rnd.choice((2, 16, 1 << 10, 1 << 20)),
                                          t["ints"][i] + rnd.choice((-1, 1))])
    elif what == 1 and t["addrs"]:                  # an address: a displacement, a stride, a bound
        i = rnd.randrange(len(t["addrs"]))
        t["addrs"][i] = rnd.choice(ADDRS + [-t["addrs"][i], t["addrs"][i] * rnd.choice((2, 1 << 20))])
    elif what == 2 and t["kids"]:                   # a child: another type, itself, one not there
        i = rnd.randrange(len(t["kids"]))
        t["kids"][i] = rnd.choice((0, t["tid"], t["tid"] + 1, max(t["tid"] - 1, 0), rnd.randrange(t["tid"] + 1),
                                   2 ** 32 - 1))
    elif what == 3:                                 # size, lower bound, extent
        key = rnd.choice(("size", "lb", "ext"))
        t[key] = rnd.choice(SIZES + [t[key] * rnd.choice((2, 1 << 20)), -t[key], t[key] + 1])
    elif what == 4:                                 # the combiner
        t["comb"] = rnd.choice(list(range(13)) + [0xFFFFFFFF, 1000])
    elif what == 5:                                 # counts that disagree with the lists
        counts = [t["ni"], t["na"], t["nd"]]
        counts[rnd.randrange(3)] = rnd.choice((0, -1, 1, 2 ** 31 - 1, -2 ** 31, counts[0] + 1))
    elif what == 6:                                 # lists grown or cut, counts following
        key = rnd.choice(("ints", "addrs", "kids"))
        if rnd.random() < 0.5 and t[key]:
            del t[key][rnd.randrange(len(t[key])):]
        else:
            t[key] += [rnd.choice((0, 1, 4)) for _ in range(rnd.choice((1, 2, 8)))]
    elif what == 7:                                 # the id
        t["tid"] = rnd.choice((0, t["tid"] + 1, max(t["tid"] - 1, 0), 2 ** 31, 2 ** 32 - 1))
    else:                                           # a count scaled: a huge type of few records
        big = [i for i, x in enumerate(t["ints"]) if x > 0]
        if big:
            i = rnd.choice(big)
            t["ints"][i] = min(t["ints"][i] * rnd.choice((1 << 8, 1 << 12, 1 << 16, 1 << 20)), 2 ** 31 - 1)
    r[2] = encode_type(t, counts)


def _edit_view(rnd, recs, r, ntypes):
    body = r[2]
    # slot 0, flags 4, disp 8, etype size 16, filetype size 24, lb 32, extent 40, blocks 48, rep 56, type 60
    at, width = rnd.choice(((8, 8), (16, 8), (24, 8), (32, 8), (40, 8), (48, 8), (56, 4), (60, 4), (4, 4)))
    if at == 60:
        v = rnd.choice((0, 1, ntypes, ntypes + 1, rnd.randrange(ntypes + 2), 2 ** 32 - 1))
    elif at == 8:
        v = rnd.choice((0, 1, -1, -54278278, 2 ** 62, 2 ** 63 - 1, -2 ** 63, 512, 4096)) % 2 ** 64
    elif at == 16:
        v = rnd.choice((0, 1, 2, 3, 8, 40, 2 ** 31 - 1, 2 ** 31, 2 ** 63, 2 ** 64 - 1))
    else:
        v = fuzzing._edge(rnd, width)
    body[at:at + width] = v.to_bytes(width, "little")


def mutate_types(data, rnd):
    """One damaged version of a rank file's bytes, its type records and views edited."""
    header, chunks, tail = fuzzing.split_chunks(data)
    metas = [(c, records(c[5])) for c in chunks if c[0] == 2]
    where = [(c, recs, r) for c, recs in metas for r in recs if r[0] in (T_TYPE, T_VIEW)]
    if not where:
        return fuzzing.mutate_rank_file(data, rnd)
    ntypes = sum(r[0] == T_TYPE for _, _, r in where)
    for _ in range(rnd.choice((1, 1, 2, 3))):
        c, recs, r = rnd.choice(where)
        if rnd.random() < 0.05 and len(recs) > 1:               # a record dropped, repeated or two swapped
            i, j = recs.index(r), rnd.randrange(len(recs))
            k = rnd.randrange(3)
            if k == 0:
                recs.remove(r)
            elif k == 1:
                recs.insert(j, [r[0], r[1], bytearray(r[2])])
            else:
                recs[i], recs[j] = recs[j], recs[i]
            where = [w for w in where if w[2] in w[1]]
            if not where:
                break
        elif r[0] == T_TYPE and len(r[2]) >= TYPE.size:
            _edit_type(rnd, recs, r)
        elif r[0] == T_VIEW and len(r[2]) >= VIEW.size:
            _edit_view(rnd, recs, r, ntypes)
    if rnd.random() < 0.5:
        for _, recs in metas:
            make_sizes_good(recs)
    for c, recs in metas:
        c[5] = join_records(recs)
    return fuzzing.join_chunks(header, chunks, tail)
