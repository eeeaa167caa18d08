"""The one-file-per-job layout (docs/trace-format.md, "One file per job"):
DIR/job.iot holds every rank's trace image, each exactly the bytes its rank
file held at MPI_Finalize, found through an index; DIR/rank-N.iot.after, if
there, continues rank N's image with the chunks it wrote after MPI_Finalize.
An image is stored raw or encoded (each event chunk's records, and each chunk
of buffer records alone, as byte planes of their fields, offsets and logical
clocks as differences, a call's start as the time since the call before
ended; the whole compressed with zstd, in frames of ZSTD_FRAME raw bytes:
ENC_PLANES_ZSTD, or deflated by a tracer built without libzstd: ENC_PLANES);
decoding gives back the rank file's bytes exactly, which its chunks'
checksums then confirm.  Each image is read when reached, so
memory holds one rank at a time."""
import os
import struct
import zlib

import numpy as np
import pyarrow as pa

from iomodel.models.schema import MAX_NP

from .tracefile import TraceError

JOB_NAME = "job.iot"
AFTER_SUFFIX = ".after"
JOB_MAGIC = b"IOMJOB\0\0"
JOB_VERSIONS = (1,)
JOB_HEADER = struct.Struct("<8sIIIIQ")    # magic, version, header size, nranks, entry size, index offset
JOB_ENTRY = struct.Struct("<QQIIQ")       # offset, size, encoding, reserved, raw size
ENC_RAW, ENC_PLANES, ENC_PLANES_ZSTD = 0, 1, 2
ZSTD_FRAME = 4 << 20                      # raw bytes per zstd frame (tracer/jobfile.c)
# raw bytes an image's compressed byte may stand for: several times the densest
# trace measured (100,000 0-byte writes: 0.24 to 0.41 B an event of 32, 135 to
# 78 to 1; bench/results/trace-bytes.json); a larger claim is a bomb, not a trace
MAX_RATIO = 512
ZSTD_LEVEL = 3
FRAME_HEAD = struct.Struct("<II")         # a zstd frame's compressed and raw sizes
FILE_HEADER_SIZE = struct.Struct("<I")    # at byte 12 of a rank's image
CHUNK_HEAD = struct.Struct("<IHHQQ")      # magic, type, header size, payload length, count
CHUNK_HEAD_SIZE, CHUNK_EVENTS, CHUNK_META, IN_PLANES = 56, 1, 2, 0x100
META_BUFFER = 6
AS_IS, DELTA, SINCE_END = range(3)
# a record's fields: offset, size, how stored (tracer/jobfile.c): struct iom_event's,
# and a buffer record's (type, length, seq, offset, padding)
EVENT_FIELDS = ((0, 1, AS_IS), (1, 1, AS_IS), (2, 2, AS_IS), (4, 4, DELTA), (8, 8, DELTA),
                (16, 8, SINCE_END), (24, 4, AS_IS), (28, 4, AS_IS))
BUFFER_FIELDS = ((0, 4, AS_IS), (4, 4, AS_IS), (8, 8, DELTA), (16, 4, AS_IS), (20, 4, AS_IS))
LAYOUTS = {CHUNK_EVENTS: (32, EVENT_FIELDS), CHUNK_META: (24, BUFFER_FIELDS)}


def _from_planes(payload, n, size, fields):
    """n records of `size` bytes back from their byte planes (tracer/jobfile.c,
    to_planes); the cumulative sums wrap at the field's width, as the
    differences did."""
    planes = np.frombuffer(payload, np.uint8)
    rec = np.empty((n, size), np.uint8)
    pos, values, since_end = 0, {}, None
    for at, width, how in fields:
        block = np.ascontiguousarray(planes[pos:pos + width * n].reshape(width, n).T)
        v = block.view(f"<u{width}").ravel()
        if how == DELTA:
            v = np.cumsum(v, dtype=v.dtype)
        values[at] = v
        pos += width * n
        if how == SINCE_END:
            since_end = at
    if since_end is not None:     # an event's t0: its gap after the call before, which ended at t0 + dt
        dt = values[24].astype(np.uint64)
        ends_before = np.concatenate([np.zeros(1, np.uint64), np.cumsum(dt[:-1], dtype=np.uint64)])
        values[since_end] = np.cumsum(values[since_end], dtype=np.uint64) + ends_before
    for at, width, _ in fields:
        rec[:, at:at + width] = values[at].view(np.uint8).reshape(n, width)
    return rec.tobytes()


def _to_planes(payload, n, size, fields):
    """_from_planes' inverse (tracer/jobfile.c, to_planes)."""
    rec = np.frombuffer(payload, np.uint8).reshape(n, size)
    values = {at: np.ascontiguousarray(rec[:, at:at + w]).view(f"<u{w}").ravel() for at, w, _ in fields}
    out = []
    for at, width, how in fields:
        v = values[at].copy()
        if how == DELTA:
            v[1:] -= values[at][:-1]
        elif how == SINCE_END:
            v[1:] -= values[at][:-1] + values[24][:-1].astype(np.uint64)
        out.append(np.ascontiguousarray(v.view(np.uint8).reshape(n, width).T).tobytes())
    return b"".join(out)


def _chunks(img):
    """(offset, type, payload length, count) of each whole chunk of a rank's
    image, in order; the walk stops at the first that does not fit.  Payloads
    may be rewritten in place as it goes (same length)."""
    at = FILE_HEADER_SIZE.unpack_from(img, 12)[0] if len(img) >= 16 else 0
    while at + CHUNK_HEAD_SIZE <= len(img):
        _, ctype, _, plen, count = CHUNK_HEAD.unpack_from(img, at)
        if plen > len(img) - at - CHUNK_HEAD_SIZE:
            return
        yield at, ctype, plen, count
        at += CHUNK_HEAD_SIZE + plen


def planes(image):
    """A rank file's bytes with its event chunks and buffer-record chunks in
    planes and marked, as the tracer turns them before deflating (ENC_PLANES)."""
    img = bytearray(image)
    for at, ctype, plen, count in _chunks(img):
        start = at + CHUNK_HEAD_SIZE
        layout = LAYOUTS.get(ctype)
        body = img[start:start + plen]
        if layout and count and plen == count * layout[0] and (     # metadata: buffer records alone
                ctype == CHUNK_EVENTS or all(struct.unpack_from("<II", body, k) == (META_BUFFER, 24)
                                             for k in range(0, plen, 24))):
            img[start:start + plen] = _to_planes(bytes(body), count, *layout)
            struct.pack_into("<H", img, at + 4, ctype | IN_PLANES)
    return bytes(img)


def zstd_frames(data):
    """`data` compressed as the tracer does (ENC_PLANES_ZSTD): frames of
    ZSTD_FRAME raw bytes, each after its compressed and raw sizes."""
    codec = pa.Codec("zstd", compression_level=ZSTD_LEVEL)
    out = []
    for at in range(0, max(len(data), 1), ZSTD_FRAME):
        raw = data[at:at + ZSTD_FRAME]
        c = codec.compress(raw, asbytes=True)
        out += [FRAME_HEAD.pack(len(c), len(raw)), c]
    return b"".join(out)


def write_job(path, images, encoding=ENC_PLANES_ZSTD):
    """A job file of the rank images given (an iterable, in rank order; each is
    encoded as it comes, so memory holds one raw image at a time), each stored
    in `encoding` (ENC_PLANES_ZSTD as the tracer, or ENC_PLANES, deflated, as
    one built without libzstd).  Returns the file's size."""
    coded, raw = [], []
    for img in images:
        coded.append(zstd_frames(planes(img)) if encoding == ENC_PLANES_ZSTD else zlib.compress(planes(img), 1))
        raw.append(len(img))
    head = JOB_HEADER.size + len(coded) * JOB_ENTRY.size
    index, at = [], head
    for n, c in zip(raw, coded):
        index.append(JOB_ENTRY.pack(at, len(c), encoding, 0, n))
        at += len(c)
    with open(path, "wb") as f:
        f.write(JOB_HEADER.pack(JOB_MAGIC, 1, JOB_HEADER.size, len(coded), JOB_ENTRY.size, JOB_HEADER.size))
        f.write(b"".join(index))
        for c in coded:
            f.write(c)
    return at


class Undecodable(ValueError):
    """A compressed image that does not decompress."""


def _unzstd(data, limit):
    """ENC_PLANES_ZSTD's frames decompressed, to at most `limit` + 1 bytes, and
    whether they were whole (a cut one: the frames before it)."""
    codec = pa.Codec("zstd")
    out, at, got = [], 0, 0
    while at < len(data) and (limit is None or got <= limit):
        if at + FRAME_HEAD.size > len(data):
            return b"".join(out), False
        csize, rsize = FRAME_HEAD.unpack_from(data, at)
        if rsize > ZSTD_FRAME:
            raise Undecodable(f"a frame of {rsize} bytes at byte {at}, more than the {ZSTD_FRAME} one holds")
        frame = data[at + FRAME_HEAD.size:at + FRAME_HEAD.size + csize]
        if len(frame) < csize:
            return b"".join(out), False
        try:
            raw = codec.decompress(frame, decompressed_size=rsize, asbytes=True)
        except (OSError, pa.ArrowException) as e:
            raise Undecodable(f"the frame at byte {at} does not decompress ({e})") from None
        if len(raw) != rsize:
            raise Undecodable(f"the frame at byte {at} decompresses to {len(raw)} bytes, not {rsize}")
        out.append(raw)
        got += rsize
        at += FRAME_HEAD.size + csize
    return b"".join(out), True


def decode_planes(data, limit=None, encoding=ENC_PLANES):
    """An image in planes (ENC_PLANES, deflated, or ENC_PLANES_ZSTD)
    decompressed (to at most `limit` + 1 bytes), with the records of its
    chunks marked IN_PLANES put back (and the marks taken off), and whether
    the stream was whole (a cut one gives what it holds)."""
    if encoding == ENC_PLANES_ZSTD:
        img, whole = _unzstd(data, limit)
        img = bytearray(img)
    else:
        inflate = zlib.decompressobj()
        try:
            img = bytearray(inflate.decompress(data, 0 if limit is None else limit + 1))
        except zlib.error as e:
            raise Undecodable(f"it does not inflate ({e})") from None
        whole = inflate.eof
    for at, ctype, plen, count in _chunks(img):
        start = at + CHUNK_HEAD_SIZE
        layout = LAYOUTS.get(ctype & ~IN_PLANES) if ctype & IN_PLANES else None
        if layout and plen == count * layout[0]:
            img[start:start + plen] = _from_planes(img[start:start + plen], count, *layout)
            struct.pack_into("<H", img, at + 4, ctype & ~IN_PLANES)
    return bytes(img), whole


class JobImage:
    """One rank's trace image in a job file: `read_bytes()` gives it (and its
    continuation), `str()` names it in errors (their byte offsets are the image's)."""

    def __init__(self, job, rank, offset, size, encoding, raw_size):
        self.job, self.rank, self.offset, self.size = job, rank, offset, size
        self.encoding, self.raw_size = encoding, raw_size

    @property
    def after(self):
        """The rank's continuation file, beside the job file."""
        return self.job.parent / f"rank-{self.rank:06d}.iot{AFTER_SUFFIX}"

    def __str__(self):
        return f"{self.job} (rank {self.rank}, from byte {self.offset})"

    def __lt__(self, other):
        return (str(self.job), self.rank) < (str(other.job), other.rank)

    @property
    def nbytes(self):
        return self.size + (self.after.stat().st_size if self.after.exists() else 0)

    def read_bytes(self):
        with open(self.job, "rb") as f:   # a cut file gives less: the parse says where
            f.seek(self.offset)
            data = f.read(max(0, min(self.size, os.fstat(f.fileno()).st_size - self.offset)))
        if self.encoding in (ENC_PLANES, ENC_PLANES_ZSTD):
            # the index's raw size bounds the decompressing (deflate packs at
            # most 1032 bytes into one; a zstd frame holds at most ZSTD_FRAME:
            # a larger claim is damage, not a trace)
            if self.encoding == ENC_PLANES and self.raw_size > 1032 * max(len(data), 1) + 1024:
                raise TraceError(str(self), None, f"corrupt index: a raw size of {self.raw_size} bytes "
                                 f"for {len(data)} compressed ones")
            if self.encoding == ENC_PLANES_ZSTD and \
                    self.raw_size > ZSTD_FRAME * (len(data) // FRAME_HEAD.size + 1):
                raise TraceError(str(self), None, f"corrupt index: a raw size of {self.raw_size} bytes "
                                 f"for {len(data)} compressed ones")
            if self.raw_size > MAX_RATIO * len(data) + 4096:
                raise TraceError(str(self), None, f"corrupt index: a raw size of {self.raw_size} bytes for "
                                 f"{len(data)} compressed ones, more than {MAX_RATIO} to 1, which no "
                                 "trace compresses to")
            got = len(data)
            try:
                data, whole = decode_planes(data, self.raw_size, self.encoding)
            except Undecodable as e:
                raise TraceError(str(self), 0, f"corrupt: the compressed trace does not decompress: {e}") \
                    from None
            if not whole and not data:
                raise TraceError(str(self), 0, f"truncated: the job file ends {got} bytes into this "
                                 f"rank's {self.size} compressed ones, before their first whole frame")
            if whole and len(data) != self.raw_size:
                raise TraceError(str(self), len(data), f"corrupt: the trace decompresses to {len(data)} "
                                 f"bytes, not the index's {self.raw_size}")
        elif self.encoding != ENC_RAW:
            raise TraceError(str(self), None, f"encoding {self.encoding}, which this iomodel "
                             "does not read")
        return data + (self.after.read_bytes() if self.after.exists() else b"")


def job_images(job):
    """Every rank's image in the job file `job` (a Path), in rank order.  Raises
    TraceError naming the file when its header or index is damaged."""
    size = os.path.getsize(job)
    with open(job, "rb") as f:
        head = f.read(JOB_HEADER.size)
        if len(head) < JOB_HEADER.size:
            raise TraceError(str(job), len(head), f"file is {len(head)} bytes, shorter than the "
                             f"{JOB_HEADER.size}-byte job header (not a complete iomodel job trace)")
        magic, version, hsize, nranks, esize, index = JOB_HEADER.unpack(head)
        if magic != JOB_MAGIC:
            raise TraceError(str(job), 0, "not an iomodel job trace (bad magic)")
        if version not in JOB_VERSIONS:
            raise TraceError(str(job), 8, f"job trace version {version}; this iomodel reads "
                             f"{', '.join(map(str, JOB_VERSIONS))}")
        if hsize != JOB_HEADER.size or esize != JOB_ENTRY.size:
            raise TraceError(str(job), 12, f"corrupt job header: header size {hsize}, entry size {esize}")
        if not 0 < nranks <= MAX_NP:
            raise TraceError(str(job), 16, f"corrupt job header: {nranks} ranks (at most {MAX_NP})")
        end = index + nranks * JOB_ENTRY.size
        if index < hsize or end > size:
            raise TraceError(str(job), 24, f"corrupt job header: an index of {nranks} ranks at byte "
                             f"{index} does not fit in the file's {size} bytes")
        f.seek(index)
        raw = f.read(nranks * JOB_ENTRY.size)
    # the images lie back to back after the index; one cut short by a
    # truncated file is read as far as it goes and the parse says where
    out, at = [], end
    for r in range(nranks):
        offset, length, encoding, _, raw_size = JOB_ENTRY.unpack_from(raw, r * JOB_ENTRY.size)
        if offset != at:
            raise TraceError(str(job), index + r * JOB_ENTRY.size,
                             f"corrupt index: rank {r}'s trace at byte {offset}, where "
                             f"{'the index' if r == 0 else f'rank {r - 1}'}'s ends at byte {at}")
        out.append(JobImage(job, r, offset, length, encoding, raw_size))
        at += length
    return out
