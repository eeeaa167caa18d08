/* iomodel_replay's shared definitions: the options it runs with (params_t),
 * where it runs (ctx_t), one phase's timings (point_t), and the functions each
 * of its parts (replayer.c, replayer_options.c, replayer_report.c) offers the others. */
#ifndef IOMODEL_REPLAYER_H
#define IOMODEL_REPLAYER_H

#define _GNU_SOURCE
#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define PROG "iomodel_replay"
#define VERSION "0.1"
#define MIB 1048576.0
#define KIB 1024.0
#define MAX_WARNINGS 64

enum { API_MPIIO, API_POSIX };
enum { FMT_DEFAULT, FMT_JSON };
enum { WRITE = 0, READ = 1 };

typedef struct {
    int api;
    long long segments, block, xfer;
    int fpp, coll, do_write, do_read, keep, existing, reorder, fsync, fsync_per_write;
    int random, reps, intra_barriers, verbose, refnum, task_offset, inter_delay;
    int reorder_random;       /* -Z: read back another task's data, picked at random (-X seed) */
    int reorder_seed;
    int num_tasks;            /* -N: tasks taking part (0: all); the others wait in a barrier */
    int idle_open;            /* --iomodel.idleOpen: the others open and close the shared file too */
    const char *path;
    int format;
    const char *summary_file;
    unsigned long long seed;
    int has_offsets;
    long long off_first, off_per_rank, off_stride;
    int tpn_override;
    double gap;               /* --iomodel.gap: idle seconds between segments */
    int gap_barrier;          /* --iomodel.gapBarrier: each segment after the first starts at a barrier */
    long long gap_every;      /* --iomodel.gapEvery: the gap (and barrier) before every K-th segment only */
    double think;             /* --iomodel.think: computing seconds between transfers */
    int reread;               /* --iomodel.reread: -w -r through one open of the file */
    int fresh;                /* --iomodel.fresh: each repetition's files set aside until the end */
    const char *names;        /* --iomodel.names: the files' names inside the directory -o */
    long long piece;          /* --iomodel.piece: bytes of one piece of a task's view (0: none) */
    long long buffer_offset;  /* --iomodel.bufferOffset: the buffer's address mod 4096 */
    int argc;
    char **argv;
} params_t;

typedef struct {
    int rank, ntasks, nodes, tpn, rank_offset;
    int crowded;              /* more tasks on this node than cores: computing yields */
    char began[64], machine[512], platform[512], api_version[64];
} ctx_t;

typedef struct { /* one phase (write or read) of one repetition, as rank 0 reports it */
    double open, wrrd, close, total, bw, iops, latency;
    double io_time; /* iomodel's io_time_s: the collective transfers each from last entry to
                     * last exit, summed; else the slowest rank's time in its own transfers */
} point_t;

/* replayer_options.c */
void parse_args(params_t *p, int argc, char **argv); /* exits 2 with one line on a bad option */
void test_file_name(const params_t *p, int who, char *buf, size_t n);
void print_warnings(FILE *o); /* the options ignored, one line each */

/* replayer_report.c */
void now_string(char *buf, size_t n);
void text_header(FILE *o, const params_t *p, const ctx_t *c);
void text_result(FILE *o, const params_t *p, int access, const point_t *r, int rep);
void text_summary(FILE *o, const params_t *p, const ctx_t *c, point_t *res[2]);
void json_summary(FILE *o, const params_t *p, const ctx_t *c, point_t *res[2]);

#endif
