"""The one-file-per-job layout (docs/trace-format.md, "One file per job"):
DIR/job.iot holds every rank's trace image, each exactly the bytes its rank
file held at MPI_Finalize, found through an index; DIR/rank-N.iot.after, if
there, continues rank N's image with the chunks it wrote after MPI_Finalize.
Each image is read when reached, so memory holds one rank at a time."""
import os
import struct

from iomodel.models.schema import MAX_NP

from .tracefile import TraceError

JOB_NAME = "job.iot"
AFTER_SUFFIX = ".after"
JOB_MAGIC = b"IOMJOB\0\0"
JOB_VERSIONS = (1,)
JOB_HEADER = struct.Struct("<8sIIIIQ")    # magic, version, header size, nranks, entry size, index offset
JOB_ENTRY = struct.Struct("<QQIIQ")       # offset, size, encoding, reserved x 2
ENC_RAW = 0


class JobImage:
    """One rank's trace image in a job file: `read_bytes()` gives it (and its
    continuation), `str()` names it in errors (their byte offsets are the image's)."""

    def __init__(self, job, rank, offset, size, encoding):
        self.job, self.rank, self.offset, self.size, self.encoding = job, rank, offset, size, encoding
        self.after = job.parent / f"rank-{rank:06d}.iot{AFTER_SUFFIX}"

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
            data = f.read(self.size)
        if self.encoding != ENC_RAW:
            raise TraceError(str(self.job), None, f"rank {self.rank}'s trace is in encoding "
                             f"{self.encoding}, which this iomodel does not read")
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
        offset, length, encoding, _, _ = JOB_ENTRY.unpack_from(raw, r * JOB_ENTRY.size)
        if offset != at:
            raise TraceError(str(job), index + r * JOB_ENTRY.size,
                             f"corrupt index: rank {r}'s trace at byte {offset}, where "
                             f"{'the index' if r == 0 else f'rank {r - 1}'}'s ends at byte {at}")
        out.append(JobImage(job, r, offset, length, encoding))
        at += length
    return out
