/* One trace file per job: at MPI_Finalize every rank's trace, already whole in
 * its own file, is copied into DIR/job.iot with one collective MPI-IO write (a
 * rank's place from the sizes gathered at rank 0), and the rank files are
 * removed once every rank's copy is written; if any rank cannot take part,
 * every rank keeps its own file.  A job of 100,000 ranks so leaves one file in
 * the trace directory instead of 100,000 (Darshan writes one log per job the
 * same way).  Each image is stored compressed: its event records (and its
 * buffer records) turned into byte planes of their fields, offsets and
 * logical clocks as differences from the record before, a call's start as the
 * time since the call before ended, then compressed with zstd (deflated where
 * the tracer was built without libzstd); a regular run of calls so takes a
 * few bytes a call instead of 32, mostly its timing.  Layout:
 * docs/trace-format.md, "One file per job". */
#define _GNU_SOURCE
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef IOM_HAVE_ZSTD
#include <zstd.h>
#endif

#define JOB_MAGIC "IOMJOB\0\0"
#define JOB_VERSION 1
#define JOB_ROUND ((uint64_t)1 << 30)  /* bytes a rank writes per collective call */

struct job_header {
    char magic[8];
    uint32_t version, header_size;
    uint32_t nranks, entry_size;
    uint64_t index_offset;           /* the index: nranks entries, in rank order */
};

struct job_entry {
    uint64_t offset, size;           /* the rank's trace image in the job file */
    uint32_t encoding, reserved;     /* 0: the rank file's bytes as they are; 1, 2: planes */
    uint64_t raw_size;               /* the image's bytes before encoding */
};

enum { ENC_RAW = 0, ENC_PLANES = 1, ENC_PLANES_ZSTD = 2 };   /* planes deflated, planes in zstd */
/* zstd's level 3, its default: on BT-IO simple-like at 64 ranks 2.5 bytes an
 * event where deflate's level 1 took 4.1, in half deflate's time (docs/performance.md) */
#define ZSTD_LEVEL 3
/* raw bytes per zstd frame, each stored after its u32 compressed and raw sizes:
 * a job file cut short loses at most the last frame of the image it cuts */
#define ZSTD_FRAME ((uint64_t)4 << 20)
#define FILE_HEADER_SIZE_AT 12      /* the rank file header's own size field */
#define CHUNK_HEAD 56
#define CHUNK_EVENTS 1
#define CHUNK_META 2
#define IN_PLANES 0x100             /* a chunk type's mark: its payload is in planes */
#define META_BUFFER 6
#define BUFFER_RECORD 24            /* a buffer record: type, length, seq, offset, padding */

/* A record's fields: offset, size, and how each is stored: as it is, as the
 * difference from the record before, or (an event's start) as the time since
 * the record before ended (its start plus its duration: the gap between calls,
 * whose duration the dt field already holds). */
enum { AS_IS, DELTA, SINCE_END };
struct field { size_t at, size; int how; };
static const struct field event_fields[] = {   /* struct iom_event */
    {0, 1, AS_IS}, {1, 1, AS_IS}, {2, 2, AS_IS}, {4, 4, DELTA}, {8, 8, DELTA}, {16, 8, SINCE_END},
    {24, 4, AS_IS}, {28, 4, AS_IS}};
static const struct field buffer_fields[] = {  /* a META_BUFFER record */
    {0, 4, AS_IS}, {4, 4, AS_IS}, {8, 8, DELTA}, {16, 4, AS_IS}, {20, 4, AS_IS}};

static uint64_t field(const unsigned char *rec, size_t at, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, rec + at, size);      /* little-endian, as the format */
    return v;
}

/* n records of `size` bytes at p turned, in place, into byte planes of their
 * fields (byte b of field f of every record in turn), stored as fields[] says
 * (modulo the field's width: the reader's cumulative sums wrap the same way). */
static void to_planes(unsigned char *p, uint64_t n, size_t size, const struct field *fields, size_t nf,
                      unsigned char *tmp)
{
    unsigned char *o = tmp;
    for (size_t f = 0; f < nf; f++) {
        size_t w = fields[f].size;
        for (uint64_t i = 0; i < n; i++) {
            const unsigned char *r = p + i * size;
            uint64_t v = field(r, fields[f].at, w), d = v;
            if (i > 0 && fields[f].how == DELTA)
                d = v - field(r - size, fields[f].at, w);
            else if (i > 0 && fields[f].how == SINCE_END)   /* an event's t0, after the dt before */
                d = v - field(r - size, 16, 8) - field(r - size, 24, 4);
            for (size_t b = 0; b < w; b++) o[b * n + i] = (unsigned char)(d >> (8 * b));
        }
        o += w * n;
    }
    memcpy(p, tmp, n * size);
}

/* A metadata chunk of buffer records alone (a run whose calls move their
 * buffers writes little else): their count, else 0. */
static uint64_t buffer_records(const unsigned char *p, uint64_t plen, uint64_t count)
{
    if (plen == 0 || plen != count * BUFFER_RECORD) return 0;
    for (uint64_t i = 0; i < count; i++)
        if (field(p + i * BUFFER_RECORD, 0, 4) != META_BUFFER || field(p + i * BUFFER_RECORD, 4, 4) != BUFFER_RECORD)
            return 0;
    return count;
}

/* Every event chunk and every buffer-record chunk of the image in planes, its
 * type marked IN_PLANES (tmp: room for the largest payload), or, with tmp
 * NULL, the largest such payload's size in *most. */
static void chunks_to_planes(unsigned char *img, uint64_t len, unsigned char *tmp, uint64_t *most)
{
    uint64_t at = 0;
    if (len >= 16) memcpy(&at, img + FILE_HEADER_SIZE_AT, 4);
    while (at + CHUNK_HEAD <= len) {
        uint16_t type;
        uint64_t plen, count;
        memcpy(&type, img + at + 4, 2);
        memcpy(&plen, img + at + 8, 8);
        memcpy(&count, img + at + 16, 8);
        if (plen > len - at - CHUNK_HEAD) break;
        unsigned char *p = img + at + CHUNK_HEAD;
        int events = type == CHUNK_EVENTS && count && plen == count * sizeof(struct iom_event);
        int buffers = type == CHUNK_META && buffer_records(p, plen, count);
        if ((events || buffers) && !tmp) {
            if (plen > *most) *most = plen;
        } else if (events || buffers) {
            if (events) to_planes(p, count, sizeof(struct iom_event), event_fields, 8, tmp);
            else to_planes(p, count, BUFFER_RECORD, buffer_fields, 5, tmp);
            type |= IN_PLANES;
            memcpy(img + at + 4, &type, 2);
        }
        at += CHUNK_HEAD + plen;
    }
}

/* The image turned into planes in place, then compressed; its encoding in
 * *enc.  NULL if memory or the compressor fails (the image may then be half
 * turned). */
static unsigned char *encode(unsigned char *img, uint64_t len, uint64_t *out_len, uint64_t *enc)
{
    uint64_t most = 0;
    chunks_to_planes(img, len, NULL, &most);
    unsigned char *tmp = malloc(most ? most : 1);
#ifdef IOM_HAVE_ZSTD
    size_t bound = 0;
    for (uint64_t at = 0; at < len || (at == 0 && bound == 0); at += ZSTD_FRAME)
        bound += 8 + ZSTD_compressBound((size_t)(len - at < ZSTD_FRAME ? len - at : ZSTD_FRAME));
#else
    uLongf bound = compressBound((uLong)len);
#endif
    unsigned char *out = tmp ? malloc(bound) : NULL;
    if (!out) { free(tmp); return NULL; }
    chunks_to_planes(img, len, tmp, NULL);
    free(tmp);
#ifdef IOM_HAVE_ZSTD
    uint64_t at = 0, o = 0;
    do {
        uint32_t sizes[2] = {0, (uint32_t)(len - at < ZSTD_FRAME ? len - at : ZSTD_FRAME)};
        size_t n = ZSTD_compress(out + o + 8, bound - o - 8, img + at, sizes[1], ZSTD_LEVEL);
        if (ZSTD_isError(n)) { free(out); return NULL; }
        sizes[0] = (uint32_t)n;
        memcpy(out + o, sizes, 8);
        o += 8 + n;
        at += sizes[1];
    } while (at < len);
    *out_len = o;
    *enc = ENC_PLANES_ZSTD;
#else
    if (compress2(out, &bound, img, (uLong)len, 1) != Z_OK) { free(out); return NULL; }
    *out_len = bound;
    *enc = ENC_PLANES;
#endif
    return out;
}

/* The rank file's first `len` bytes (what its last whole chunk ends at). */
static unsigned char *read_image(const char *path, uint64_t len)
{
    unsigned char *buf = malloc(len ? len : 1);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    uint64_t got = 0;
    while (buf && f >= 0 && got < len) {
        ssize_t n = pread(f, buf + got, len - got, (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (uint64_t)n;
    }
    if (f >= 0) close(f);
    if (got != len) { free(buf); return NULL; }
    return buf;
}

static int all_ok(int ok)
{
    int bad = !ok, nbad = 0;
    if (iom_real_MPI_Allreduce(&bad, &nbad, 1, IOM_INT, IOM_SUM, IOM_COMM_WORLD) != MPI_SUCCESS)
        return 0;
    return nbad == 0;
}

/* Open MPI 4.1's OMPIO names its shared-pointer files after the file in a
 * fixed buffer: a job file path of 245 characters made MPI_File_open abort the
 * process (glibc's "buffer overflow detected").  Longer paths keep the rank
 * files, the job going on as untraced by the join. */
#ifdef OPEN_MPI
#define JOB_PATH_MAX 200
#else
#define JOB_PATH_MAX 4000
#endif

int iom_join(const char *dir, const char *rank_path, uint64_t len, int rank, int nranks)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/job.iot", dir);
    if (!iom_real_MPI_Gather || !iom_real_MPI_Scatter || !iom_real_MPI_File_open ||
        !iom_real_MPI_File_write_at_all || !iom_real_MPI_File_close || !iom_real_MPI_Get_count || !IOM_BYTE)
        return -1;   /* the same on every rank: no collective call made */
    /* rank 0's buffer starts with the header and the index */
    size_t head = rank == 0 ? sizeof(struct job_header) + (size_t)nranks * sizeof(struct job_entry) : 0;
    unsigned char *image = read_image(rank_path, len), *coded = NULL;
    uint64_t mine[3] = {len, ENC_RAW, len}, stored = len;      /* stored size, encoding, raw size */
    if (image && (coded = encode(image, len, &stored, &mine[1])) != NULL) {
        free(image);
        image = coded;
        mine[0] = stored;
    } else if (image) {   /* encode() may have turned some chunks into planes: read it again */
        free(image);
        image = read_image(rank_path, len);
    }
    len = stored;
    unsigned char *buf = image && head ? malloc(head + len) : image;
    if (buf && head) memcpy(buf + head, image, len);
    if (head) free(image);
    uint64_t *sizes = rank == 0 ? calloc((size_t)nranks, sizeof mine) : NULL;
    int ok = buf && (rank != 0 || sizes) && n > 0 && n <= JOB_PATH_MAX;
    if (!all_ok(ok)) goto fail;   /* every rank keeps its rank file, whichever could not join */
    iom_real_MPI_Gather(mine, (int)sizeof mine, IOM_BYTE, sizes, (int)sizeof mine, IOM_BYTE, 0, IOM_COMM_WORLD);
    uint64_t place[2] = {0, 0};   /* where this rank's image goes, how many write rounds */
    uint64_t at = 0;              /* rank 0: the job file's size */
    uint64_t *places = NULL;
    if (rank == 0) {
        struct job_header *h = (struct job_header *)buf;
        struct job_entry *e = (struct job_entry *)(buf + sizeof *h);
        memcpy(h->magic, JOB_MAGIC, 8);
        h->version = JOB_VERSION;
        h->header_size = sizeof *h;
        h->nranks = (uint32_t)nranks;
        h->entry_size = sizeof *e;
        h->index_offset = sizeof *h;
        uint64_t rounds = 0;
        at = head;
        for (int r = 0; r < nranks; r++) {
            uint64_t *g = sizes + 3 * r;
            e[r] = (struct job_entry){at, g[0], (uint32_t)g[1], 0, g[2]};
            uint64_t n = r == 0 ? head + g[0] : g[0];
            if ((n + JOB_ROUND - 1) / JOB_ROUND > rounds) rounds = (n + JOB_ROUND - 1) / JOB_ROUND;
            at += e[r].size;
        }
        for (int r = 0; r < nranks; r++) {                    /* reused: each rank's place */
            sizes[2 * r] = r == 0 ? 0 : e[r].offset;
            sizes[2 * r + 1] = rounds;
        }
        places = sizes;
        unlink(path);                 /* a job file left by an earlier run in this directory */
    }
    iom_real_MPI_Scatter(places, (int)sizeof place, IOM_BYTE, place, (int)sizeof place, IOM_BYTE, 0,
                         IOM_COMM_WORLD);
    MPI_File fh;
    ok = iom_real_MPI_File_open(IOM_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, IOM_INFO_NULL,
                                &fh) == MPI_SUCCESS;
    if (!all_ok(ok)) {
        if (ok) iom_real_MPI_File_close(&fh);
        goto fail;
    }
    /* every rank makes the same number of collective calls, the last ones empty */
    uint64_t total = head + len, done = 0;
    for (uint64_t i = 0; i < place[1]; i++) {
        uint64_t n = total - done < JOB_ROUND ? total - done : JOB_ROUND;
        MPI_Status st;
        int count = -1;
        /* a full disk may show only as a short count (Open MPI's OMPIO) */
        if (iom_real_MPI_File_write_at_all(fh, (MPI_Offset)(place[0] + done), buf + done, (int)n, IOM_BYTE,
                                           &st) != MPI_SUCCESS ||
            iom_real_MPI_Get_count(&st, IOM_BYTE, &count) != MPI_SUCCESS || (uint64_t)count != n)
            ok = 0;
        done += n;
    }
    if (iom_real_MPI_File_close(&fh) != MPI_SUCCESS) ok = 0;
    struct stat sb;
    if (rank == 0 && ok && (stat(path, &sb) != 0 || (uint64_t)sb.st_size != at)) ok = 0;
    if (!all_ok(ok)) {
        if (rank == 0) unlink(path);
        goto fail;
    }
    free(buf);
    free(sizes);
    return 0;
fail:
    free(buf);
    free(sizes);
    return -1;
}
