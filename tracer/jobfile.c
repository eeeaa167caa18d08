/* One trace file per job: at MPI_Finalize every rank's trace, already whole in
 * its own file, is copied into DIR/job.iot with one collective MPI-IO write (a
 * rank's place from the sizes gathered at rank 0), and the rank files are
 * removed once every rank's copy is written; if any rank cannot take part,
 * every rank keeps its own file.  A job of 100,000 ranks so leaves one file in
 * the trace directory instead of 100,000 (Darshan writes one log per job the
 * same way).  Layout: docs/trace-format.md, "One file per job". */
#define _GNU_SOURCE
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    uint32_t encoding, reserved;     /* 0: the rank file's bytes as they are */
    uint64_t reserved2;
};

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

int iom_join(const char *dir, const char *rank_path, uint64_t len, int rank, int nranks)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/job.iot", dir);
    if (!iom_real_MPI_Gather || !iom_real_MPI_Scatter || !iom_real_MPI_File_open ||
        !iom_real_MPI_File_write_at_all || !iom_real_MPI_File_close || !IOM_BYTE)
        return -1;   /* the same on every rank: no collective call made */
    /* rank 0's buffer starts with the header and the index */
    size_t head = rank == 0 ? sizeof(struct job_header) + (size_t)nranks * sizeof(struct job_entry) : 0;
    unsigned char *image = read_image(rank_path, len);
    unsigned char *buf = image && head ? malloc(head + len) : image;
    if (buf && head) memcpy(buf + head, image, len);
    if (head) free(image);
    uint64_t mine[2] = {len, 0}, *sizes = rank == 0 ? calloc((size_t)nranks, sizeof mine) : NULL;
    int ok = buf && (rank != 0 || sizes);
    if (!all_ok(ok)) goto fail;
    iom_real_MPI_Gather(mine, (int)sizeof mine, IOM_BYTE, sizes, (int)sizeof mine, IOM_BYTE, 0, IOM_COMM_WORLD);
    uint64_t place[2] = {0, 0};   /* where this rank's image goes, how many write rounds */
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
        uint64_t at = head, rounds = 0;
        for (int r = 0; r < nranks; r++) {
            e[r] = (struct job_entry){at, sizes[2 * r], 0, 0, 0};
            sizes[2 * r] = r == 0 ? 0 : at;                     /* reused: each rank's place */
            uint64_t n = r == 0 ? head + sizes[0] : e[r].size;
            if ((n + JOB_ROUND - 1) / JOB_ROUND > rounds) rounds = (n + JOB_ROUND - 1) / JOB_ROUND;
            at += e[r].size;
        }
        for (int r = 0; r < nranks; r++) sizes[2 * r + 1] = rounds;
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
        if (iom_real_MPI_File_write_at_all(fh, (MPI_Offset)(place[0] + done), buf + done, (int)n, IOM_BYTE,
                                           MPI_STATUS_IGNORE) != MPI_SUCCESS)
            ok = 0;
        done += n;
    }
    if (iom_real_MPI_File_close(&fh) != MPI_SUCCESS) ok = 0;
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
