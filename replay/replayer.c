/*
 * iomodel_replay: the project's own stand-in for IOR 4.x.
 *
 * An MPI program that takes the IOR options iomodel's generator emits, performs
 * IOR's access pattern (MPI-IO with explicit offsets, or POSIX pread/pwrite),
 * times open, transfer and close the way IOR does, and reports in IOR's formats:
 * the text "Results:" and "Summary of all tests:" tables on stdout, and IOR's
 * JSON summary (-O summaryFormat=JSON -O summaryFile=F), so that one parser
 * (replay/results.py) reads both.  Written from IOR's documented behaviour and
 * output formats; no IOR code.  See docs/commands/replay.md.
 *
 * Layout (IOR 4.x): transfer j < b/t of segment i < s of rank r is at
 *     j*t + (F ? i*b : i*N*b + r*b)
 * and with --iomodel.offsets=first,per_rank,stride at
 *     j*t + first + r*per_rank + i*stride
 * where r is the rank, or for reads with -C the rank whose data is read.
 * With --iomodel.piece=P (MPI-IO, one shared file) each task's data goes
 * through a file view of pieces of P bytes, the tasks' pieces in turn
 * (piece q of task r at D + q*N*P, D = r*P, or first + r*per_rank with
 * --iomodel.offsets), transfer j of segment i at byte (i*b + j*t) of the view:
 * the non-contiguous access of an application's file view, which MPI-IO
 * handles as it does the application's (collective buffering, data sieving).
 *
 * Exit status: 0 done, 1 I/O error (one line on stderr, from the first failing
 * rank), 2 bad options (one line on stderr, printed once).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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
#define PERM_ARRAY_MAX (1LL << 24) /* shuffle in an array up to this many transfers a block */
#define CALL_TIMES_MAX (1LL << 20) /* collective transfers timed call by call up to this many a rank */

enum { API_MPIIO, API_POSIX };
enum { FMT_DEFAULT, FMT_JSON };
enum { WRITE = 0, READ = 1 };

typedef struct {
    int api;
    long long segments, block, xfer;
    int fpp, coll, do_write, do_read, keep, existing, reorder, fsync, fsync_per_write;
    int random, reps, intra_barriers, verbose, refnum, task_offset, inter_delay;
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
    char began[64], machine[512], platform[512], api_version[64];
} ctx_t;

typedef struct { /* one phase (write or read) of one repetition, as rank 0 reports it */
    double open, wrrd, close, total, bw, iops, latency;
    double io_time; /* iomodel's io_time_s: the collective transfers each from last entry to
                     * last exit, summed; else the slowest rank's time in its own transfers */
} point_t;

static char warnings[MAX_WARNINGS][256];
static int nwarnings;
/* The tasks taking part in the test: MPI_COMM_WORLD, or its first -N tasks;
 * and those that open its shared file: test_comm, or (--iomodel.idleOpen) all. */
static MPI_Comm test_comm, open_comm;

/* ------------------------------------------------------------------ options */

/* Before MPI_Init the rank is unknown: print option errors once, from the
 * process the launcher calls rank 0 (or the only process). */
static int launcher_rank_is_zero(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
    if (launcher_rank_is_zero()) {
        va_list ap;
        va_start(ap, fmt);
        fputs(PROG ": ", stderr);
        vfprintf(stderr, fmt, ap);
        fputs(" (see " PROG " -h)\n", stderr);
        va_end(ap);
    } else {
        /* The launcher kills the job when the first process fails; let rank 0
         * fail first so its message is not lost with it. */
        sleep(2);
    }
    exit(2);
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    if (nwarnings >= MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(warnings[nwarnings++], sizeof warnings[0], fmt, ap);
    va_end(ap);
}

static void usage(void) __attribute__((noreturn));
static void usage(void)
{
    if (!launcher_rank_is_zero())
        exit(0);
    printf("Usage: mpirun -np N " PROG " [IOR options]\n"
           "IOR 4.x options replayed (sizes take k, m, g, t suffixes, binary):\n"
           "  -a MPIIO|POSIX  API (MPI-IO explicit offsets, or pread/pwrite)   -s N   segments\n"
           "  -b SIZE  block per task and segment   -t SIZE  transfer size      -i N   repetitions\n"
           "  -o PATH  test file                    -F  file per process        -c  collective\n"
           "  -w  write   -r  read (neither: both)  -k  keep the file(s)        -E  use existing file\n"
           "  -C  read the data of another node's task (-Q N: N nodes away)     -e  fsync after the writes\n"
           "  -Y  fsync after every write            -z  shuffled offsets within the task's block\n"
           "  -g  barriers between open, transfer and close   -d S  delay before each phase\n"
           "  -A N  reference number   -O summaryFormat=default|JSON   -O summaryFile=FILE\n"
           "  -N N  the first N tasks take part; the others wait in a barrier until they are done\n"
           "  --random-offset-seed=N  seed for -z (default 1)\n"
           "Extensions:\n"
           "  --iomodel.offsets=FIRST,PER_RANK,STRIDE  transfer j of segment i of rank r at\n"
           "        FIRST + r*PER_RANK + i*STRIDE + j*t, instead of IOR's layout\n"
           "  --iomodel.tasksPerNode=K  tasks per node assumed by -C (default: as placed by MPI)\n"
           "  --iomodel.gap=S  stay idle S seconds between segments (the application's time\n"
           "                   between phases); not counted in the transfer time\n"
           "  --iomodel.gapBarrier  start each segment after the first at a barrier, after the\n"
           "                   gap (the application's processes communicated between its\n"
           "                   phases, so they started each together); not counted either\n"
           "  --iomodel.think=S  compute (spin) S seconds before every transfer but the first\n"
           "                   (with --iomodel.gap: but each segment's first), the application's\n"
           "                   computing between a phase's operations; not counted in the\n"
           "                   transfer time\n"
           "  --iomodel.reread  with -w -r: read back through the open the write used (no\n"
           "                   close and reopen between them), as an application that\n"
           "                   rereads what it wrote; the open and close count in the write\n"
           "                   and the read respectively\n"
           "  --iomodel.fresh  (-w, -i N) each repetition writes into newly allocated pages:\n"
           "                   its files are renamed aside (NAME.iomodel-rep.K) instead of\n"
           "                   removed, and all removed at the end (N times the data's space);\n"
           "                   IOR's removal hands the next repetition the pages just freed,\n"
           "                   still in the CPU's cache (on tmpfs 15%% faster than fresh ones)\n"
           "  --iomodel.names=PATTERN  -o is a directory (made if absent, removed if empty when\n"
           "                   the files are) and the file of task r is PATTERN in it, {rank}\n"
           "                   (with -F; {rank:0N}: N digits) replaced by r: the application's\n"
           "                   names, which place files alike where names decide (Gluster DHT)\n"
           "  --iomodel.bufferOffset=B  the transfer buffer starts B bytes (0 to 4095) past a\n"
           "                   4 KiB boundary, as the application's did (default 0): copies\n"
           "                   between the page cache and a buffer a few bytes past one can\n"
           "                   be several times slower\n"
           "  --iomodel.piece=P  (-a MPIIO, shared file) each task moves its data through a\n"
           "                   file view of pieces of P bytes, the N tasks' pieces in turn:\n"
           "                   piece q of task r at D + q*N*P, D = r*P (or FIRST + r*PER_RANK\n"
           "                   with --iomodel.offsets); -t a multiple of P\n"
           "Other IOR options are accepted and ignored with a warning.\n");
    exit(0);
}

/* IOR-style size: digits with an optional k/m/g/t/p suffix (binary). */
static int parse_size(const char *s, long long *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    if (*end) {
        switch (tolower((unsigned char)*end)) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        case 'p': shift = 50; break;
        default: return -1;
        }
        if (end[1])
            return -1;
    }
    if (v > ((unsigned long long)LLONG_MAX >> shift))
        return -1;
    *out = (long long)(v << shift);
    return 0;
}

static long long size_arg(const char *opt, const char *val)
{
    long long v;
    if (parse_size(val, &v) != 0)
        usage_error("bad value '%s' for %s: expected a size like 4096, 64k, 1m or 2g", val, opt);
    return v;
}

static int int_arg(const char *opt, const char *val, int min)
{
    long long v = size_arg(opt, val);
    if (v < min || v > INT_MAX)
        usage_error("bad value '%s' for %s: expected an integer >= %d", val, opt, min);
    return (int)v;
}

static void parse_O(params_t *p, const char *val)
{
    char *copy = strdup(val), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            usage_error("bad -O directive '%s': expected key=value", kv);
        *eq = 0;
        const char *v = eq + 1;
        if (strcasecmp(kv, "summaryFormat") == 0) {
            if (strcasecmp(v, "JSON") == 0)
                p->format = FMT_JSON;
            else if (strcasecmp(v, "default") == 0)
                p->format = FMT_DEFAULT;
            else if (strcasecmp(v, "CSV") == 0) {
                warn("-O summaryFormat=CSV is not implemented; using the default text format");
                p->format = FMT_DEFAULT;
            } else
                usage_error("bad -O summaryFormat=%s: expected default, JSON or CSV", v);
        } else if (strcasecmp(kv, "summaryFile") == 0) {
            if (!*v)
                usage_error("-O summaryFile= needs a file name");
            p->summary_file = strdup(v);
        } else {
            warn("-O %s=%s is not implemented; ignored", kv, v);
        }
    }
    free(copy);
}

static void parse_offsets(params_t *p, const char *val)
{
    char *copy = strdup(val), *save = NULL;
    long long v[3];
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == 3 || parse_size(tok, &v[n]) != 0)
            usage_error("bad --iomodel.offsets=%s: expected FIRST,PER_RANK,STRIDE (sizes >= 0)", val);
        n++;
    }
    if (n != 3)
        usage_error("bad --iomodel.offsets=%s: expected FIRST,PER_RANK,STRIDE (sizes >= 0)", val);
    free(copy);
    p->has_offsets = 1;
    p->off_first = v[0];
    p->off_per_rank = v[1];
    p->off_stride = v[2];
}

/* PATTERN with every {rank} (or {rank:0N}, zero-padded to N digits) replaced
 * by `who`; -1 when a brace is not one of those. */
static int name_from_pattern(const char *pat, int who, char *buf, size_t n)
{
    size_t o = 0;
    for (const char *q = pat; *q; ) {
        char piece[32];
        const char *add = piece;
        size_t len;
        if (*q == '{') {
            int width = 0, used = 0;
            if (strncmp(q, "{rank}", 6) == 0) {
                used = 6;
            } else if (sscanf(q, "{rank:0%d}%n", &width, &used) == 1 && used > 0 && width >= 1 &&
                       width <= 19 && q[used - 1] == '}') {
                ;
            } else {
                return -1;
            }
            snprintf(piece, sizeof piece, "%0*d", width, who);
            len = strlen(piece);
            q += used;
        } else if (*q == '}') {
            return -1;
        } else {
            add = q++;
            len = 1;
        }
        if (o + len >= n)
            return -1;
        memcpy(buf + o, add, len);
        o += len;
    }
    buf[o] = 0;
    return 0;
}

static void parse_args(params_t *p, int argc, char **argv)
{
    /* IOR's defaults */
    memset(p, 0, sizeof *p);
    p->api = API_POSIX;
    p->segments = 1;
    p->block = 1048576;
    p->xfer = 262144;
    p->reps = 1;
    p->task_offset = 1;
    p->path = "testFile";
    p->seed = 1;
    p->argc = argc;
    p->argv = argv;

    /* IOR options iomodel_replay does not implement: flags and options with a value */
    const char *ignored_flags = "KmuWRxyZ";
    const char *ignored_valued = "DGjlMTX";
    const char *ignored_long_flags[] = {"--warningAsErrors", "--dryRun", "--posix.odirect",
        "--posix.rangelocks", "--dummy.delay-only-rank0", "--mpiio.showHints",
        "--mpiio.preallocate", "--mpiio.useStridedDatatype", "--mpiio.useFileView",
        "--mmap.madv_dont_need", "--mmap.madv_pattern", NULL};
    const char *ignored_long_valued[] = {"--randomPrefill", "--mpiio.hintsFileName",
        "--dummy.delay-create", "--dummy.delay-close", "--dummy.delay-sync", "--dummy.delay-xfer",
        "--dataPacketType", NULL};

    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if (a[0] != '-' || a[1] == 0)
            usage_error("unexpected argument '%s'", a);
        if (a[1] == '-') { /* long options: --name, --name=value, --name value */
            const char *eq = strchr(a, '=');
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(nl < sizeof name ? nl : sizeof name - 1), a);
            const char *val = eq ? eq + 1 : NULL;
            if (strcmp(name, "--collective") == 0 && !val) {
                p->coll = 1;
                continue;
            }
            if (strcmp(name, "--help") == 0)
                usage();
            if (strcmp(name, "--iomodel.reread") == 0 || strcmp(name, "--iomodel.gapBarrier") == 0 ||
                strcmp(name, "--iomodel.fresh") == 0 || strcmp(name, "--iomodel.idleOpen") == 0) {
                if (val)
                    usage_error("option %s takes no value", name);
                *(strcmp(name, "--iomodel.reread") == 0 ? &p->reread
                  : strcmp(name, "--iomodel.fresh") == 0 ? &p->fresh
                  : strcmp(name, "--iomodel.idleOpen") == 0 ? &p->idle_open : &p->gap_barrier) = 1;
                continue;
            }
            if (strcmp(name, "--random-offset-seed") == 0 || strcmp(name, "--iomodel.offsets") == 0 ||
                strcmp(name, "--iomodel.tasksPerNode") == 0 || strcmp(name, "--iomodel.gap") == 0 ||
                strcmp(name, "--iomodel.think") == 0 || strcmp(name, "--iomodel.names") == 0 ||
                strcmp(name, "--iomodel.piece") == 0 || strcmp(name, "--iomodel.bufferOffset") == 0) {
                if (!val) {
                    if (k + 1 >= argc)
                        usage_error("option %s needs a value", name);
                    val = argv[++k];
                }
                if (strcmp(name, "--random-offset-seed") == 0) {
                    char *end;
                    errno = 0;
                    long long s = strtoll(val, &end, 10);
                    if (errno || *end || end == val)
                        usage_error("bad value '%s' for %s: expected an integer", val, name);
                    p->seed = (unsigned long long)s;
                } else if (strcmp(name, "--iomodel.offsets") == 0) {
                    parse_offsets(p, val);
                } else if (strcmp(name, "--iomodel.names") == 0) {
                    p->names = val;
                } else if (strcmp(name, "--iomodel.bufferOffset") == 0) {
                    p->buffer_offset = size_arg(name, val);
                    if (p->buffer_offset > 4095)
                        usage_error("--iomodel.bufferOffset must be 0 to 4095 bytes");
                } else if (strcmp(name, "--iomodel.piece") == 0) {
                    p->piece = size_arg(name, val);
                    if (p->piece < 1 || p->piece > INT_MAX)
                        usage_error("--iomodel.piece must be 1 byte to %d bytes", INT_MAX);
                } else if (strcmp(name, "--iomodel.gap") == 0 || strcmp(name, "--iomodel.think") == 0) {
                    char *end;
                    errno = 0;
                    double s = strtod(val, &end);
                    if (errno || *end || end == val || !(s >= 0) || s > 3600)
                        usage_error("bad %s=%s: expected seconds, 0 to 3600", name, val);
                    *(strcmp(name, "--iomodel.gap") == 0 ? &p->gap : &p->think) = s;
                } else {
                    p->tpn_override = int_arg(name, val, 1);
                }
                continue;
            }
            int known = 0;
            for (int i = 0; ignored_long_flags[i]; i++)
                if (strcmp(name, ignored_long_flags[i]) == 0)
                    known = 1;
            for (int i = 0; ignored_long_valued[i]; i++)
                if (strcmp(name, ignored_long_valued[i]) == 0) {
                    known = 1;
                    if (!val && k + 1 < argc)
                        val = argv[++k];
                }
            if (!known && strchr(name, '.') && strncmp(name, "--iomodel.", 10) != 0)
                known = 1; /* another IOR module's option */
            if (!known)
                usage_error("unknown option %s", name);
            warn("option %s%s%s is not implemented; ignored", name, val ? "=" : "", val ? val : "");
            continue;
        }

        char c = a[1];
        /* value: -s4, -s=4 or -s 4 */
        const char *inline_val = a[2] ? (a[2] == '=' ? a + 3 : a + 2) : NULL;
        int takes_value = strchr("abtsoiOAQdfN", c) || strchr(ignored_valued, c);
        const char *val = NULL;
        char opt[3] = {'-', c, 0};
        if (takes_value) {
            if (inline_val)
                val = inline_val;
            else if (k + 1 < argc)
                val = argv[++k];
            else
                usage_error("option %s needs a value", opt);
        } else if (a[2]) {
            usage_error("unknown option %s", a);
        }
        switch (c) {
        case 'a':
            if (strcasecmp(val, "MPIIO") == 0)
                p->api = API_MPIIO;
            else if (strcasecmp(val, "POSIX") == 0)
                p->api = API_POSIX;
            else
                usage_error("API %s is not supported (MPIIO or POSIX)", val);
            break;
        case 'b': p->block = size_arg(opt, val); break;
        case 't': p->xfer = size_arg(opt, val); break;
        case 's': p->segments = size_arg(opt, val); break;
        case 'o':
            if (!*val)
                usage_error("option -o needs a file name");
            p->path = val;
            break;
        case 'i': p->reps = int_arg(opt, val, 1); break;
        case 'N': p->num_tasks = int_arg(opt, val, 0); break;
        case 'O': parse_O(p, val); break;
        case 'A': p->refnum = int_arg(opt, val, 0); break;
        case 'Q': p->task_offset = int_arg(opt, val, 1); break;
        case 'd': p->inter_delay = int_arg(opt, val, 0); break;
        case 'f': usage_error("IOR scripts (-f) are not supported: give the options on the command line");
        case 'c': p->coll = 1; break;
        case 'C': p->reorder = 1; break;
        case 'e': p->fsync = 1; break;
        case 'E': p->existing = 1; break;
        case 'F': p->fpp = 1; break;
        case 'k': p->keep = 1; break;
        case 'r': p->do_read = 1; break;
        case 'w': p->do_write = 1; break;
        case 'Y': p->fsync_per_write = 1; break;
        case 'g': p->intra_barriers = 1; break;
        case 'v': p->verbose++; break;
        case 'z':
            if (p->random)
                warn("-z given twice: random (overlapping) offsets are not implemented; "
                     "using shuffled offsets");
            p->random = 1;
            break;
        case 'h': usage();
        default:
            if (strchr(ignored_flags, c))
                warn("option %s is not implemented; ignored", opt);
            else if (strchr(ignored_valued, c))
                warn("option %s %s is not implemented; ignored", opt, val);
            else
                usage_error("unknown option %s", opt);
        }
    }

    /* IOR's rules */
    if (!p->do_write && !p->do_read)
        p->do_write = p->do_read = 1;
    if (p->segments < 1)
        usage_error("-s must be at least 1");
    if (p->xfer <= 0)
        usage_error("-t must be greater than 0");
    if (p->xfer % 8 || p->block % 8)
        usage_error("-b (%lld) and -t (%lld) must be multiples of 8", p->block, p->xfer);
    if (p->block < p->xfer)
        usage_error("-b (%lld) must not be smaller than -t (%lld)", p->block, p->xfer);
    if (p->block % p->xfer)
        usage_error("-b (%lld) must be a multiple of -t (%lld)", p->block, p->xfer);
    if (p->random && p->block == p->xfer)
        usage_error("-z needs -b greater than -t (a block of one transfer has one order)");
    if (p->random && p->reorder && !p->fpp)
        usage_error("-z and -C together need -F (IOR's rule for a shared file)");
    if (p->xfer / 8 > INT_MAX)
        usage_error("-t %lld is too large", p->xfer);
    /* the idle tasks make no transfer: no collective call on the file but open and close */
    if (p->idle_open && (p->api != API_MPIIO || p->fpp || p->coll || p->piece || p->fsync ||
                         p->fsync_per_write || p->reread))
        usage_error("--iomodel.idleOpen needs -a MPIIO and a shared file (no -F), independent "
                    "transfers (no -c, no --iomodel.piece) and no -e, -Y or --iomodel.reread");
    if (p->reread && !(p->do_write && p->do_read))
        usage_error("--iomodel.reread needs -w and -r (the read rereads what the write wrote)");
    if (p->names) {
        char probe[1024];
        if (!*p->names || strchr(p->names, '/'))
            usage_error("bad --iomodel.names=%s: expected a file name (no '/')", p->names);
        if (strlen(p->names) > 900 || strlen(p->path) > 2048)
            usage_error("--iomodel.names: the pattern or the directory -o is too long");
        if (name_from_pattern(p->names, 0, probe, sizeof probe) != 0)
            usage_error("bad --iomodel.names=%s: {rank} or {rank:0N} (N from 1 to 19) expected",
                        p->names);
        int ranked = strstr(p->names, "{rank") != NULL; /* a valid pattern's only braces */
        if (p->fpp && !ranked)
            usage_error("--iomodel.names=%s with -F needs {rank}: every task has a file of its own",
                        p->names);
        if (!p->fpp && ranked)
            usage_error("--iomodel.names=%s: {rank} needs -F (one shared file has one name)",
                        p->names);
    }
    if (p->piece) {
        if (p->api != API_MPIIO || p->fpp)
            usage_error("--iomodel.piece needs -a MPIIO and one shared file (no -F): it is a file view");
        if (p->xfer % p->piece)
            usage_error("--iomodel.piece=%lld: -t (%lld) must be a multiple of it", p->piece, p->xfer);
    }
    if (p->fresh && (!p->do_write || p->keep || p->existing))
        usage_error("--iomodel.fresh needs -w and neither -k nor -E: it sets aside the files "
                    "each repetition writes");
    if (p->reread && (p->reorder || p->existing))
        usage_error("--iomodel.reread cannot take -C or -E: each task rereads its own data "
                    "through the open its write used");
}

/* ------------------------------------------------------------------ helpers */

static void now_string(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, n, "%a %b %e %H:%M:%S %Y", &tm);
}

/* IOR's HumanReadable(BASE_TWO): "1 MiB", "1.50 GiB", "262144 bytes" */
static void human(char *buf, size_t n, long long v)
{
    const double G = 1073741824.0, M = MIB;
    if (v >= (long long)G) {
        if (v % (long long)G)
            snprintf(buf, n, "%.2f GiB", v / G);
        else
            snprintf(buf, n, "%lld GiB", (long long)(v / (long long)G));
    } else if (v >= (long long)M) {
        if (v % (long long)M)
            snprintf(buf, n, "%.2f MiB", v / M);
        else
            snprintf(buf, n, "%lld MiB", (long long)(v / (long long)M));
    } else {
        snprintf(buf, n, "%lld bytes", v);
    }
}

static void test_file_name(const params_t *p, int who, char *buf, size_t n)
{
    if (p->names) {
        char base[1024];
        name_from_pattern(p->names, who, base, sizeof base); /* checked in parse_args */
        if (snprintf(buf, n, "%s/%s", p->path, base) >= (int)n)
            buf[n - 1] = 0; /* parse_args bounds the length: not reached */
    } else if (p->fpp)
        snprintf(buf, n, "%s.%08d", p->path, who);
    else
        snprintf(buf, n, "%s", p->path);
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The order of the transfers of one block: identity, a shuffled array (-z),
 * or for huge blocks an affine permutation j -> (a*j + c) mod n. */
typedef struct {
    long long n;
    long long *perm;
    uint64_t a, c;
    int affine;
} order_t;

static int order_init(order_t *o, const params_t *p, int who)
{
    memset(o, 0, sizeof *o);
    o->n = p->block / p->xfer;
    if (!p->random)
        return 0;
    uint64_t s = p->seed * 0x100000001b3ULL + (uint64_t)who + 1;
    if (o->n <= PERM_ARRAY_MAX) {
        o->perm = malloc(sizeof(long long) * (size_t)o->n);
        if (!o->perm)
            return -1;
        for (long long j = 0; j < o->n; j++)
            o->perm[j] = j;
        for (long long j = o->n - 1; j > 0; j--) { /* Fisher-Yates */
            long long r = (long long)(splitmix64(&s) % (uint64_t)(j + 1));
            long long t = o->perm[j];
            o->perm[j] = o->perm[r];
            o->perm[r] = t;
        }
    } else {
        o->affine = 1;
        do
            o->a = splitmix64(&s) % (uint64_t)o->n;
        while (o->a == 0 || gcd64(o->a, (uint64_t)o->n) != 1);
        o->c = splitmix64(&s) % (uint64_t)o->n;
    }
    return 0;
}

static long long order_at(const order_t *o, long long j)
{
    if (o->perm)
        return o->perm[j];
    if (o->affine)
        return (long long)(((unsigned __int128)o->a * (uint64_t)j + o->c) % (uint64_t)o->n);
    return j;
}

static long long segment_base(const params_t *p, const ctx_t *c, long long i, int who)
{
    if (p->has_offsets)
        return p->off_first + (long long)who * p->off_per_rank + i * p->off_stride;
    if (p->fpp)
        return i * p->block;
    return i * c->ntasks * p->block + (long long)who * p->block;
}

static void mpi_message(int err, char *buf, size_t n)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "MPI error %d", err);
    /* one line */
    for (char *q = s; *q; q++)
        if (*q == '\n')
            *q = ' ';
    snprintf(buf, n, "%s", s);
}

/* ------------------------------------------------------------------ I/O */

typedef struct {
    MPI_File fh;
    int fd;
    int open;
} file_t;

typedef struct {
    char msg[512];
    int failed;
} ioerr_t;

static void fail(ioerr_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(ioerr_t *e, const char *fmt, ...)
{
    if (e->failed)
        return;
    e->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

static void remove_file(const params_t *p, const char *name)
{
    if (p->api == API_MPIIO) {
        MPI_File_delete((char *)name, MPI_INFO_NULL); /* absent: nothing to do */
    } else {
        unlink(name);
    }
}

/* --iomodel.fresh: repetition rep's file(s) under the name NAME.iomodel-rep.REP */
static void aside_name(const char *name, int rep, char *buf, size_t n)
{
    if (snprintf(buf, n, "%s.iomodel-rep.%d", name, rep) >= (int)n)
        buf[n - 1] = 0; /* parse_args bounds the names' length well below n */
}

/* The repetition's files, at its end: removed as IOR does, or (--iomodel.fresh)
 * renamed aside so that the next repetition's writes take pages of their own.
 * Collective: every rank calls it. */
static void end_repetition(const params_t *p, const ctx_t *c, int rep)
{
    char name[4096], aside[4200];
    MPI_Barrier(test_comm);
    test_file_name(p, c->rank, name, sizeof name);
    if (p->fpp || c->rank == 0) {
        if (!p->fresh)
            remove_file(p, name);
        else {
            aside_name(name, rep, aside, sizeof aside);
            if (rename(name, aside) != 0 && errno != ENOENT) /* not renamed: do as IOR */
                remove_file(p, name);
        }
    }
    MPI_Barrier(test_comm);
}

/* --iomodel.fresh: remove the files the first `reps` repetitions set aside */
static void remove_aside(const params_t *p, const ctx_t *c, int reps)
{
    char name[4096], aside[4200];
    MPI_Barrier(test_comm);
    test_file_name(p, c->rank, name, sizeof name);
    if (p->fpp || c->rank == 0)
        for (int rep = 0; rep < reps; rep++) {
            aside_name(name, rep, aside, sizeof aside);
            unlink(aside);
        }
    MPI_Barrier(test_comm);
}

static void file_open(const params_t *p, const char *name, int access, file_t *f, ioerr_t *e)
{
    f->open = 0;
    if (p->api == API_MPIIO) {
        MPI_Comm comm = p->fpp ? MPI_COMM_SELF : open_comm;
        int mode = access == WRITE ? (MPI_MODE_CREATE | (p->reread ? MPI_MODE_RDWR : MPI_MODE_WRONLY))
                                   : MPI_MODE_RDONLY;
        int rc = MPI_File_open(comm, (char *)name, mode, MPI_INFO_NULL, &f->fh);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot open %s for %s: %s", name, access == WRITE ? "writing" : "reading", m);
            return;
        }
        MPI_File_set_errhandler(f->fh, MPI_ERRORS_RETURN);
    } else {
        f->fd = access == WRITE ? open(name, (p->reread ? O_RDWR : O_WRONLY) | O_CREAT, 0664)
                                : open(name, O_RDONLY);
        if (f->fd < 0) {
            fail(e, "cannot open %s for %s: %s", name, access == WRITE ? "writing" : "reading",
                 strerror(errno));
            return;
        }
    }
    f->open = 1;
}

/* --iomodel.piece: the task's view, pieces of P bytes every N*P bytes from its first */
static void piece_view(const params_t *p, const ctx_t *c, file_t *f, int who, const char *name,
                       ioerr_t *e)
{
    if (!f->open)
        return;
    MPI_Datatype one, tiled;
    long long disp = p->has_offsets ? p->off_first + (long long)who * p->off_per_rank
                                    : (long long)who * p->piece;
    MPI_Type_contiguous((int)p->piece, MPI_BYTE, &one);
    MPI_Type_create_resized(one, 0, (MPI_Aint)c->ntasks * p->piece, &tiled);
    MPI_Type_commit(&tiled);
    int rc = MPI_File_set_view(f->fh, (MPI_Offset)disp, MPI_BYTE, tiled, "native", MPI_INFO_NULL);
    MPI_Type_free(&one);
    MPI_Type_free(&tiled);
    if (rc != MPI_SUCCESS) {
        char m[MPI_MAX_ERROR_STRING];
        mpi_message(rc, m, sizeof m);
        fail(e, "cannot set the view of pieces of %lld bytes on %s: %s", p->piece, name, m);
    }
}

static void file_sync(const params_t *p, file_t *f, const char *name, ioerr_t *e)
{
    if (!f->open)
        return;
    if (p->api == API_MPIIO) {
        int rc = MPI_File_sync(f->fh);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot sync %s: %s", name, m);
        }
    } else if (fsync(f->fd) != 0) {
        fail(e, "cannot sync %s: %s", name, strerror(errno));
    }
}

static void file_close(const params_t *p, file_t *f, const char *name, ioerr_t *e)
{
    if (!f->open)
        return;
    f->open = 0;
    if (p->api == API_MPIIO) {
        int rc = MPI_File_close(&f->fh);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot close %s: %s", name, m);
        }
    } else if (close(f->fd) != 0) {
        fail(e, "cannot close %s: %s", name, strerror(errno));
    }
}

/* One transfer of p->xfer bytes at `offset`; collective with -c under MPI-IO. */
static void transfer(const params_t *p, file_t *f, int access, void *buf, long long offset,
                     MPI_Datatype unit, int count, const char *name, ioerr_t *e)
{
    const char *what = access == WRITE ? "write" : "read";
    if (p->api == API_MPIIO) {
        MPI_Status st;
        int rc;
        if (access == WRITE)
            rc = p->coll ? MPI_File_write_at_all(f->fh, offset, buf, count, unit, &st)
                         : MPI_File_write_at(f->fh, offset, buf, count, unit, &st);
        else
            rc = p->coll ? MPI_File_read_at_all(f->fh, offset, buf, count, unit, &st)
                         : MPI_File_read_at(f->fh, offset, buf, count, unit, &st);
        if (rc != MPI_SUCCESS) {
            char m[MPI_MAX_ERROR_STRING];
            mpi_message(rc, m, sizeof m);
            fail(e, "cannot %s %lld bytes at offset %lld of %s: %s", what, p->xfer, offset, name, m);
            return;
        }
        int got = 0;
        MPI_Get_count(&st, unit, &got);
        if (got != count)
            fail(e, "short %s at offset %lld of %s: %lld of %lld bytes", what, offset, name,
                 (long long)got * (p->xfer / count), p->xfer);
    } else {
        long long done = 0;
        while (done < p->xfer) {
            ssize_t n = access == WRITE
                            ? pwrite(f->fd, (char *)buf + done, (size_t)(p->xfer - done), offset + done)
                            : pread(f->fd, (char *)buf + done, (size_t)(p->xfer - done), offset + done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                fail(e, "cannot %s %lld bytes at offset %lld of %s: %s", what, p->xfer, offset, name,
                     strerror(errno));
                return;
            }
            if (n == 0) {
                fail(e, "short %s at offset %lld of %s: %lld of %lld bytes", what, offset, name,
                     done, p->xfer);
                return;
            }
            done += n;
        }
    }
}

/* After a step every rank may have failed in: the lowest failing rank prints
 * its one-line message; everyone learns whether to stop. */
static int any_failed(const ctx_t *c, const ioerr_t *e)
{
    int mine = e->failed ? c->rank : INT_MAX, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, test_comm);
    if (first == INT_MAX)
        return 0;
    if (first == c->rank) {
        fprintf(stderr, PROG ": rank %d: %s\n", c->rank, e->msg);
        fflush(stderr);
    }
    return 1;
}

/* Times compared across ranks need one clock.  MPI_Wtime is not one: Open
 * MPI counts it from each process's first call, and ranks leave a barrier up
 * to hundreds of microseconds apart when they outnumber the cores.  Ranks on
 * one node share CLOCK_MONOTONIC; across nodes, each rank counts from its own
 * exit from a barrier (as the tracer's time zero), microseconds apart. */
static int clock_shared;     /* every rank on this node: CLOCK_MONOTONIC */
static double clock_origin;  /* otherwise MPI_Wtime at the barrier's exit */

static double now(void)
{
    if (clock_shared) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    return MPI_Wtime() - clock_origin;
}

static void clock_init(const ctx_t *c)
{
    MPI_Comm node;
    int size = 0;
    MPI_Comm_split_type(test_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &size);
    MPI_Comm_free(&node);
    int shared = size == c->ntasks, all_shared;
    MPI_Allreduce(&shared, &all_shared, 1, MPI_INT, MPI_MIN, test_comm);
    clock_shared = all_shared;
    MPI_Barrier(test_comm);
    clock_origin = MPI_Wtime();
}

/* The time of a phase's collective transfers (rank 0; -1 elsewhere, or when a
 * rank could not time them): per call, from the last rank's entry to the last
 * rank's exit, summed.  A rank's own time in its calls falls short when the
 * last to leave is not the same rank in every call (two ranks' 1 MiB
 * collective writes to tmpfs, after a barrier each: 0.28 and 0.60 ms in turn,
 * 0.44 ms a call by either rank's own calls, 0.60 ms so); the model reckons a
 * traced collective phase the same way.  Collective: every rank calls it. */
static double call_time(const ctx_t *c, const double *calls, long long ops)
{
    long long mine[3] = {calls != NULL, ops, -ops}, all[3];
    MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_MIN, test_comm);
    if (!all[0] || all[1] != -all[2] || ops == 0)
        return -1.0; /* a rank without the times, or ranks of different counts */
    double *last = c->rank == 0 ? malloc((size_t)(2 * ops) * sizeof *last) : NULL;
    int ok = c->rank != 0 || last != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, test_comm);
    if (!all_ok)
        return -1.0;
    MPI_Reduce(calls, last, (int)(2 * ops), MPI_DOUBLE, MPI_MAX, 0, test_comm);
    double sum = -1.0;
    if (c->rank == 0) {
        sum = 0.0;
        for (long long j = 0; j < ops; j++)
            if (last[2 * j + 1] > last[2 * j])
                sum += last[2 * j + 1] - last[2 * j];
        free(last);
    }
    return sum;
}

/* One write or read phase of one repetition, timed as IOR does: a barrier, then
 * per rank open start/stop, transfer start/stop, close start/stop; rank 0 gets
 * the earliest starts and the latest stops.  Returns 0, or 1 after an error. */
static int run_phase(const params_t *p, const ctx_t *c, int access, void *buf, point_t *out,
                     file_t *held)
{
    int who = access == READ ? (c->rank + c->rank_offset) % c->ntasks : c->rank;
    char name[4096];
    test_file_name(p, who, name, sizeof name);
    ioerr_t e = {{0}, 0};
    file_t local = {0};
    /* --iomodel.reread: the write leaves its open file in *held for the read */
    file_t *fp = held ? held : &local;
    int opens = !(held && access == READ), closes = !(held && access == WRITE);
    order_t order;
    if (order_init(&order, p, who) != 0)
        fail(&e, "out of memory for the -z order of %lld transfers", p->block / p->xfer);

    MPI_Datatype unit = MPI_BYTE;
    int count = (int)p->xfer;
    if (p->xfer > INT_MAX) { /* count in 8-byte units */
        MPI_Type_contiguous(8, MPI_BYTE, &unit);
        MPI_Type_commit(&unit);
        count = (int)(p->xfer / 8);
    }

    if (access == WRITE && !p->existing) {
        if (p->fpp)
            remove_file(p, name);
        else if (c->rank == 0)
            remove_file(p, name);
    }
    if (p->inter_delay)
        sleep((unsigned)p->inter_delay);
    MPI_Barrier(test_comm);

    double t[6];
    long long ops = 0;
    t[0] = now();
    if (!e.failed && opens) {
        file_open(p, name, access, fp, &e);
        if (p->piece)
            piece_view(p, c, fp, who, name, &e);
    }
    else if (!e.failed && !fp->open)
        fail(&e, "%s is not open for the reread", name);
    t[1] = now();
    /* every rank must hold the file before collective transfers (acts as -g here) */
    if (any_failed(c, &e)) {
        file_close(p, fp, name, &e);
        free(order.perm);
        if (unit != MPI_BYTE)
            MPI_Type_free(&unit);
        return 1;
    }
    if (p->intra_barriers)
        MPI_Barrier(test_comm);
    t[2] = now();
    long long per_block = p->block / p->xfer;
    /* collective calls on a shared file: write/read_at_all, and MPI_File_sync for -Y */
    int keep_going = p->api == API_MPIIO && !p->fpp && (p->coll || p->fsync_per_write);
    double idle = 0.0;
    /* collective transfers: each one's entry and exit, for call_time() */
    long long nops = p->segments * per_block;
    double *calls = p->api == API_MPIIO && !p->fpp && p->coll && nops <= CALL_TIMES_MAX
                        ? malloc((size_t)(2 * nops) * sizeof *calls) : NULL;
    for (long long i = 0; i < p->segments; i++) {
        /* with pieces, the view places the data: offsets are in the task's own bytes */
        long long base = p->piece ? i * p->block : segment_base(p, c, i, who);
        if (i > 0 && (p->gap > 0 || p->gap_barrier)) { /* the application's time between phases */
            double s0 = now();
            struct timespec ts = {(time_t)p->gap, (long)((p->gap - (time_t)p->gap) * 1e9)};
            while (p->gap > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
            /* every rank runs every segment, failed or not, so all meet here */
            if (p->gap_barrier)
                MPI_Barrier(test_comm);
            idle += now() - s0;
        }
        for (long long j = 0; j < per_block; j++) {
            /* after an error keep issuing collective calls so that no rank waits forever */
            if (e.failed && !keep_going)
                break;
            /* the computing between a phase's operations: spin, as the application computes
             * (a sleep would free the core and wake late); a gap replaces it between phases */
            if (p->think > 0 && (j > 0 || (i > 0 && p->gap <= 0))) {
                double s0 = now();
                while (now() - s0 < p->think) {
                }
                idle += now() - s0;
            }
            double a = now();
            transfer(p, fp, access, buf, base + order_at(&order, j) * p->xfer, unit, count, name, &e);
            if (calls && ops < nops) {
                calls[2 * ops] = a;
                calls[2 * ops + 1] = now();
            }
            ops++;
            if (access == WRITE && p->fsync_per_write)
                file_sync(p, fp, name, &e);
        }
    }
    if (access == WRITE && p->fsync)
        file_sync(p, fp, name, &e);
    t[3] = now();
    t[2] += idle; /* the transfer time leaves the idle gaps and the computing out */
    if (p->intra_barriers)
        MPI_Barrier(test_comm);
    t[4] = now();
    if (closes || e.failed)
        file_close(p, fp, name, &e);
    t[5] = now();
    free(order.perm);
    if (unit != MPI_BYTE)
        MPI_Type_free(&unit);
    if (any_failed(c, &e)) {
        file_close(p, fp, name, &e);
        free(calls);
        return 1;
    }
    double per_call = call_time(c, calls, ops);
    free(calls);

    double starts[3] = {t[0], t[2], t[4]}, stops[3] = {t[1], t[3], t[5]}, first[3], last[3];
    double latency = ops ? (t[3] - t[2]) / ops : 0.0, min_latency = 0.0;
    /* wr/rd is IOR's span (first start to last end over ranks), which counts the
     * ranks' skew leaving the barrier; a traced application's phase time is the
     * slowest process's time inside its own calls, so report that too */
    double busy = t[3] - t[2], max_busy = 0.0;
    MPI_Reduce(starts, first, 3, MPI_DOUBLE, MPI_MIN, 0, test_comm);
    MPI_Reduce(stops, last, 3, MPI_DOUBLE, MPI_MAX, 0, test_comm);
    MPI_Reduce(&latency, &min_latency, 1, MPI_DOUBLE, MPI_MIN, 0, test_comm);
    MPI_Reduce(&busy, &max_busy, 1, MPI_DOUBLE, MPI_MAX, 0, test_comm);
    if (c->rank == 0) {
        double agg = (double)c->ntasks * p->segments * p->block;
        out->open = last[0] - first[0];
        out->wrrd = last[1] - first[1];
        out->close = last[2] - first[2];
        out->total = last[2] - first[0];
        if (out->total <= 0)
            out->total = 1e-9;
        double access_time = out->wrrd > 0 ? out->wrrd : 1e-9;
        out->bw = agg / out->total;
        out->iops = agg / p->xfer / access_time;
        out->latency = min_latency;
        out->io_time = per_call >= 0 ? per_call : max_busy;
    }
    return 0;
}

/* ------------------------------------------------------------------ text output */

/* IOR's number format in the Results table: 10 wide, left-justified, 6 decimals
 * below 1, 2 below 3600, none above. */
static void pp(FILE *o, double v)
{
    if (v < 0) {
        fputs("   -       ", o);
        return;
    }
    int prec = v < 1 ? 6 : (v < 3600 ? 2 : 0);
    fprintf(o, "%-10.*f ", prec, v);
}

static const char *api_name(const params_t *p)
{
    return p->api == API_MPIIO ? "MPIIO" : "POSIX";
}

static void text_header(FILE *o, const params_t *p, const ctx_t *c)
{
    char path[4096], xs[64], bs[64], as[64];
    test_file_name(p, 0, path, sizeof path);
    human(xs, sizeof xs, p->xfer);
    human(bs, sizeof bs, p->block);
    human(as, sizeof as, (long long)c->ntasks * p->segments * p->block);
    fprintf(o, PROG "-" VERSION ": IOR-compatible replay of MPI I/O patterns (iomodel)\n");
    fprintf(o, "%-20s: %s\n", "Began", c->began);
    fprintf(o, "%-20s: ", "Command line");
    for (int i = 0; i < p->argc; i++)
        fprintf(o, "%s%s", i ? " " : "", p->argv[i]);
    fprintf(o, "\n%-20s: %s\n", "Machine", c->machine);
    fprintf(o, "%-20s: %d\n", "TestID", 0);
    fprintf(o, "%-20s: %s\n", "StartTime", c->began);
    fprintf(o, "%-20s: %s\n", "Path", path);
    fprintf(o, "\nOptions: \n");
    fprintf(o, "%-20s: %s\n", "api", api_name(p));
    fprintf(o, "%-20s: %s\n", "apiVersion", c->api_version);
    fprintf(o, "%-20s: %s\n", "test filename", p->path);
    fprintf(o, "%-20s: %s\n", "access", p->fpp ? "file-per-process" : "single-shared-file");
    fprintf(o, "%-20s: %s\n", "type", p->coll ? "collective" : "independent");
    fprintf(o, "%-20s: %lld\n", "segments", p->segments);
    fprintf(o, "%-20s: %s\n", "ordering in a file", p->random ? "random" : "sequential");
    if (p->reorder) {
        fprintf(o, "%-20s: %s\n", "ordering inter file", "constant task offset");
        fprintf(o, "%-20s: %d\n", "task offset", p->task_offset);
    } else {
        fprintf(o, "%-20s: %s\n", "ordering inter file", "no tasks offsets");
    }
    if (p->has_offsets)
        fprintf(o, "%-20s: first %lld, per rank %lld, stride %lld\n", "iomodel offsets",
                p->off_first, p->off_per_rank, p->off_stride);
    if (p->piece)
        fprintf(o, "%-20s: %lld bytes, the tasks' in turn\n", "iomodel pieces", p->piece);
    if (p->buffer_offset)
        fprintf(o, "%-20s: %lld bytes past 4 KiB\n", "iomodel buffer", p->buffer_offset);
    fprintf(o, "%-20s: %d\n", "nodes", c->nodes);
    fprintf(o, "%-20s: %d\n", "tasks", c->ntasks);
    fprintf(o, "%-20s: %d\n", "clients per node", c->tpn);
    fprintf(o, "%-20s: %d\n", "repetitions", p->reps);
    fprintf(o, "%-20s: %s\n", "xfersize", xs);
    fprintf(o, "%-20s: %s\n", "blocksize", bs);
    fprintf(o, "%-20s: %s\n", "aggregate filesize", as);
    fprintf(o, "\nResults: \n\n");
    fprintf(o, "access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    "
               "wr/rd(s)   close(s)   total(s)   iter\n");
    fprintf(o, "------    ---------  ----       ----------  ---------- ---------  --------   "
               "--------   --------   --------   ----\n");
    fflush(o);
}

static void text_result(FILE *o, const params_t *p, int access, const point_t *r, int rep)
{
    fprintf(o, "%-10s", access == WRITE ? "write" : "read");
    pp(o, r->bw / MIB);
    pp(o, r->iops);
    pp(o, r->latency);
    fputc(' ', o); /* IOR 4.1's latency column is one wider */
    pp(o, p->block / KIB);
    pp(o, p->xfer / KIB);
    pp(o, r->open);
    pp(o, r->wrrd);
    pp(o, r->close);
    pp(o, r->total);
    fprintf(o, "%-4d\n", rep);
    fflush(o);
}

typedef struct {
    double bw_max, bw_min, bw_mean, bw_sd, ops_max, ops_min, ops_mean, ops_sd, mean_time;
} stats_t;

static void stats(const params_t *p, const ctx_t *c, const point_t *r, int reps, stats_t *s)
{
    double agg = (double)c->ntasks * p->segments * p->block;
    double bsum = 0, osum = 0, tsum = 0;
    s->bw_max = s->ops_max = -1;
    s->bw_min = s->ops_min = HUGE_VAL;
    for (int i = 0; i < reps; i++) {
        double bw = agg / r[i].total, ops = agg / p->xfer / r[i].total;
        s->bw_max = fmax(s->bw_max, bw);
        s->bw_min = fmin(s->bw_min, bw);
        s->ops_max = fmax(s->ops_max, ops);
        s->ops_min = fmin(s->ops_min, ops);
        bsum += bw;
        osum += ops;
        tsum += r[i].total;
    }
    s->bw_mean = bsum / reps;
    s->ops_mean = osum / reps;
    s->mean_time = tsum / reps;
    double bv = 0, ov = 0;
    for (int i = 0; i < reps; i++) {
        double bw = agg / r[i].total, ops = agg / p->xfer / r[i].total;
        bv += (bw - s->bw_mean) * (bw - s->bw_mean);
        ov += (ops - s->ops_mean) * (ops - s->ops_mean);
    }
    s->bw_sd = sqrt(bv / reps);
    s->ops_sd = sqrt(ov / reps);
}

static void text_summary(FILE *o, const params_t *p, const ctx_t *c, point_t *res[2])
{
    fprintf(o, "\nSummary of all tests:\n");
    fprintf(o, "%-9s %10s %10s %10s %10s %10s %10s %10s %10s %10s", "Operation", "Max(MiB)",
            "Min(MiB)", "Mean(MiB)", "StdDev", "Max(OPs)", "Min(OPs)", "Mean(OPs)", "StdDev",
            "Mean(s)");
    fprintf(o, " Stonewall(s) Stonewall(MiB) Test# #Tasks tPN reps fPP reord reordoff reordrand"
               " seed segcnt ");
    fprintf(o, "%8s %8s %9s %5s RefNum\n", " blksiz", "xsize", "aggs(MiB)", "API");
    for (int a = 0; a < 2; a++) {
        if (!(a == WRITE ? p->do_write : p->do_read))
            continue;
        stats_t s;
        stats(p, c, res[a], p->reps, &s);
        fprintf(o, "%-9s ", a == WRITE ? "write" : "read");
        fprintf(o, "%10.2f %10.2f %10.2f %10.2f ", s.bw_max / MIB, s.bw_min / MIB, s.bw_mean / MIB,
                s.bw_sd / MIB);
        fprintf(o, "%10.2f %10.2f %10.2f %10.2f ", s.ops_max, s.ops_min, s.ops_mean, s.ops_sd);
        fprintf(o, "%10.5f %10s %13s ", s.mean_time, "NA", "NA");
        fprintf(o, "%5d %6d %3d %4d %3d %5d %8d %9d %4d ", 0, c->ntasks, c->tpn, p->reps, p->fpp,
                p->reorder, p->task_offset, 0, 0);
        fprintf(o, "%6lld %8lld %8lld %9.1f %3s %6d\n", p->segments, p->block, p->xfer,
                (double)c->ntasks * p->segments * p->block / MIB, api_name(p), p->refnum);
    }
    char fin[64];
    now_string(fin, sizeof fin);
    fprintf(o, "%-20s: %s\n", "Finished", fin);
    fflush(o);
}

/* ------------------------------------------------------------------ JSON output */

typedef struct {
    FILE *f;
    int depth;
    int first[16];
} jw_t;

static void jw_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
        if (*q == '"' || *q == '\\')
            fprintf(f, "\\%c", *q);
        else if (*q < 0x20)
            fprintf(f, "\\u%04x", *q);
        else
            fputc(*q, f);
    }
    fputc('"', f);
}

static void jw_key(jw_t *w, const char *key)
{
    if (w->depth > 0) {
        fputs(w->first[w->depth] ? "\n" : ",\n", w->f);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->f);
    }
    w->first[w->depth] = 0;
    if (key) {
        jw_string(w->f, key);
        fputs(": ", w->f);
    }
}

static void jw_open(jw_t *w, const char *key, char bracket)
{
    jw_key(w, key);
    fputc(bracket, w->f);
    w->first[++w->depth] = 1;
}

static void jw_close(jw_t *w, char bracket)
{
    w->depth--;
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->f);
    fputc(bracket, w->f);
}

static void jw_int(jw_t *w, const char *key, long long v)
{
    jw_key(w, key);
    fprintf(w->f, "%lld", v);
}

static void jw_num(jw_t *w, const char *key, double v, int decimals)
{
    jw_key(w, key);
    fprintf(w->f, "%.*f", decimals, isfinite(v) ? v : 0.0);
}

static void jw_str(jw_t *w, const char *key, const char *v)
{
    jw_key(w, key);
    jw_string(w->f, v);
}

static void json_summary(FILE *o, const params_t *p, const ctx_t *c, point_t *res[2])
{
    jw_t w = {o, 0, {1}};
    char path[4096], cmd[8192] = "", xs[64], bs[64], as[64], fin[64];
    size_t used = 0;
    for (int i = 0; i < p->argc && used < sizeof cmd - 1; i++)
        used += (size_t)snprintf(cmd + used, sizeof cmd - used, "%s%s", i ? " " : "", p->argv[i]);
    test_file_name(p, 0, path, sizeof path);
    human(xs, sizeof xs, p->xfer);
    human(bs, sizeof bs, p->block);
    human(as, sizeof as, (long long)c->ntasks * p->segments * p->block);

    jw_open(&w, NULL, '{');
    jw_str(&w, "Version", PROG " " VERSION);
    jw_str(&w, "Began", c->began);
    jw_str(&w, "Command line", cmd);
    jw_str(&w, "Machine", c->machine);
    jw_open(&w, "tests", '[');
    jw_open(&w, NULL, '{');
    jw_int(&w, "TestID", 0);
    jw_str(&w, "StartTime", c->began);
    jw_str(&w, "Path", path);

    jw_open(&w, "Parameters", '{');
    jw_int(&w, "testID", 0);
    jw_int(&w, "refnum", p->refnum);
    jw_str(&w, "api", api_name(p));
    jw_str(&w, "platform", c->platform);
    jw_str(&w, "testFileName", p->path);
    jw_int(&w, "deadlineForStonewall", 0);
    jw_int(&w, "stoneWallingWearOut", 0);
    jw_int(&w, "maxTimeDuration", 0);
    jw_int(&w, "outlierThreshold", 0);
    jw_str(&w, "options", "(null)");
    jw_int(&w, "dryRun", 0);
    jw_int(&w, "nodes", c->nodes);
    jw_int(&w, "memoryPerTask", 0);
    jw_int(&w, "memoryPerNode", 0);
    jw_int(&w, "tasksPerNode", c->tpn);
    jw_int(&w, "repetitions", p->reps);
    jw_int(&w, "multiFile", 0);
    jw_int(&w, "interTestDelay", p->inter_delay);
    jw_int(&w, "fsync", p->fsync);
    jw_int(&w, "fsyncperwrite", p->fsync_per_write);
    jw_int(&w, "useExistingTestFile", p->existing);
    jw_int(&w, "uniqueDir", 0);
    jw_int(&w, "singleXferAttempt", 0);
    jw_int(&w, "readFile", p->do_read);
    jw_int(&w, "writeFile", p->do_write);
    jw_int(&w, "filePerProc", p->fpp);
    jw_int(&w, "reorderTasks", p->reorder);
    jw_int(&w, "reorderTasksRandom", 0);
    jw_int(&w, "reorderTasksRandomSeed", 0);
    jw_int(&w, "randomOffset", p->random);
    jw_int(&w, "checkWrite", 0);
    jw_int(&w, "checkRead", 0);
    jw_int(&w, "dataPacketType", 0);
    jw_int(&w, "keepFile", p->keep);
    jw_int(&w, "keepFileWithError", 0);
    jw_int(&w, "warningAsErrors", 0);
    jw_int(&w, "verbose", p->verbose);
    jw_str(&w, "data packet type", "g");
    jw_int(&w, "setTimeStampSignature/incompressibleSeed", 0);
    jw_int(&w, "collective", p->coll);
    jw_int(&w, "segmentCount", p->segments);
    jw_int(&w, "transferSize", p->xfer);
    jw_int(&w, "blockSize", p->block);
    jw_int(&w, "numTasks", c->ntasks);
    jw_int(&w, "taskPerNodeOffset", p->task_offset);
    jw_int(&w, "randomOffsetSeed", (long long)p->seed);
    if (p->piece)
        jw_int(&w, "iomodelPiece", p->piece);
    if (p->buffer_offset)
        jw_int(&w, "iomodelBufferOffset", p->buffer_offset);
    if (p->has_offsets) {
        jw_open(&w, "iomodelOffsets", '{');
        jw_int(&w, "first", p->off_first);
        jw_int(&w, "perRank", p->off_per_rank);
        jw_int(&w, "stride", p->off_stride);
        jw_close(&w, '}');
    }
    jw_close(&w, '}');

    jw_open(&w, "Options", '{');
    jw_str(&w, "api", api_name(p));
    jw_str(&w, "apiVersion", c->api_version);
    jw_str(&w, "test filename", p->path);
    jw_str(&w, "access", p->fpp ? "file-per-process" : "single-shared-file");
    jw_str(&w, "type", p->coll ? "collective" : "independent");
    jw_int(&w, "segments", p->segments);
    jw_str(&w, "ordering in a file", p->random ? "random" : "sequential");
    if (p->reorder) {
        jw_str(&w, "ordering inter file", "constant task offset");
        jw_int(&w, "task offset", p->task_offset);
    } else {
        jw_str(&w, "ordering inter file", "no tasks offsets");
    }
    jw_int(&w, "nodes", c->nodes);
    jw_int(&w, "tasks", c->ntasks);
    jw_int(&w, "clients per node", c->tpn);
    jw_int(&w, "repetitions", p->reps);
    jw_str(&w, "xfersize", xs);
    jw_str(&w, "blocksize", bs);
    jw_str(&w, "aggregate filesize", as);
    jw_close(&w, '}');

    /* like IOR 4.1: one flat list, write then read for each repetition */
    jw_open(&w, "Results", '[');
    for (int rep = 0; rep < p->reps; rep++)
        for (int a = 0; a < 2; a++) {
            if (!(a == WRITE ? p->do_write : p->do_read))
                continue;
            const point_t *r = &res[a][rep];
            jw_open(&w, NULL, '{');
            jw_str(&w, "access", a == WRITE ? "write" : "read");
            jw_num(&w, "bwMiB", r->bw / MIB, 4);
            jw_num(&w, "blockKiB", p->block / KIB, 4);
            jw_num(&w, "xferKiB", p->xfer / KIB, 4);
            jw_num(&w, "iops", r->iops, 4);
            jw_num(&w, "latency", r->latency, 6);
            jw_num(&w, "openTime", r->open, 6);
            jw_num(&w, "wrRdTime", r->wrrd, 6);
            jw_num(&w, "iomodelIoTime", r->io_time, 6);
            jw_num(&w, "closeTime", r->close, 6);
            jw_num(&w, "totalTime", r->total, 6);
            jw_int(&w, "iter", rep);
            jw_close(&w, '}');
        }
    jw_close(&w, ']');
    jw_close(&w, '}');
    jw_close(&w, ']');

    jw_open(&w, "summary", '[');
    for (int a = 0; a < 2; a++) {
        if (!(a == WRITE ? p->do_write : p->do_read))
            continue;
        stats_t s;
        stats(p, c, res[a], p->reps, &s);
        jw_open(&w, NULL, '{');
        jw_str(&w, "operation", a == WRITE ? "write" : "read");
        jw_str(&w, "API", api_name(p));
        jw_int(&w, "TestID", 0);
        jw_int(&w, "ReferenceNumber", p->refnum);
        jw_int(&w, "segmentCount", p->segments);
        jw_int(&w, "blockSize", p->block);
        jw_int(&w, "transferSize", p->xfer);
        jw_int(&w, "numTasks", c->ntasks);
        jw_int(&w, "tasksPerNode", c->tpn);
        jw_int(&w, "repetitions", p->reps);
        jw_int(&w, "filePerProc", p->fpp);
        jw_int(&w, "reorderTasks", p->reorder);
        jw_int(&w, "taskPerNodeOffset", p->task_offset);
        jw_int(&w, "reorderTasksRandom", 0);
        jw_int(&w, "reorderTasksRandomSeed", 0);
        jw_num(&w, "bwMaxMIB", s.bw_max / MIB, 4);
        jw_num(&w, "bwMinMIB", s.bw_min / MIB, 4);
        jw_num(&w, "bwMeanMIB", s.bw_mean / MIB, 4);
        jw_num(&w, "bwStdMIB", s.bw_sd / MIB, 4);
        jw_num(&w, "OPsMax", s.ops_max, 4);
        jw_num(&w, "OPsMin", s.ops_min, 4);
        jw_num(&w, "OPsMean", s.ops_mean, 4);
        jw_num(&w, "OPsSD", s.ops_sd, 4);
        jw_num(&w, "MeanTime", s.mean_time, 6);
        jw_num(&w, "xsizeMiB", (double)c->ntasks * p->segments * p->block / MIB, 4);
        jw_close(&w, '}');
    }
    jw_close(&w, ']');
    now_string(fin, sizeof fin);
    jw_str(&w, "Finished", fin);
    jw_close(&w, '}');
    fputc('\n', o);
    fflush(o);
}

/* ------------------------------------------------------------------ main */

static void describe_placement(const params_t *p, ctx_t *c)
{
    MPI_Comm node;
    int nrank, nsize, leader, lowest, block = 1;
    MPI_Comm_split_type(test_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    leader = nrank == 0;
    MPI_Allreduce(&leader, &c->nodes, 1, MPI_INT, MPI_SUM, test_comm);
    c->tpn = nsize;
    MPI_Bcast(&c->tpn, 1, MPI_INT, 0, test_comm);
    MPI_Allreduce(&c->rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    if (c->ntasks > 1) { /* block (by slot) mapping: rank 1 shares rank 0's node */
        int v = c->rank == 1 ? lowest == 0 : 0;
        MPI_Allreduce(&v, &block, 1, MPI_INT, MPI_MAX, test_comm);
    }
    MPI_Comm_free(&node);
    if (p->tpn_override) {
        c->tpn = p->tpn_override;
        c->nodes = (c->ntasks + c->tpn - 1) / c->tpn;
        block = 1;
    }
    /* IOR 4: -C moves task_offset nodes away; by slot that is tasks-per-node ranks */
    int shift = block ? c->tpn : 1;
    c->rank_offset = p->reorder ? (int)(((long long)p->task_offset * shift) % c->ntasks) : 0;
}

/* --iomodel.idleOpen: rank 0 tells the idle tasks the next phase (WRITE + 1 or
 * READ + 1), or 0 when there is none (a failure ends the test early) */
static int announce(const params_t *p, int next)
{
    if (p->idle_open && test_comm != MPI_COMM_WORLD)
        MPI_Bcast(&next, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return next;
}

/* --iomodel.idleOpen, a task beyond -N: open the shared file with the others at
 * each phase and close it with them, as an application's processes that opened
 * a file one of them writes alone (two processes holding a Gluster file open
 * make one's 512-byte write slower than when it alone holds it: medians of 0.47
 * to 0.72 against 0.37 to 0.44 ms); they wait in MPI_File_close meanwhile */
static void idle_tasks(const params_t *p)
{
    char name[4096];
    int next;
    test_file_name(p, 0, name, sizeof name);
    while ((next = announce(p, 0)) != 0) {
        MPI_File fh;
        int mode = next - 1 == WRITE ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
        if (MPI_File_open(MPI_COMM_WORLD, name, mode, MPI_INFO_NULL, &fh) == MPI_SUCCESS)
            MPI_File_close(&fh);
    }
}

/* -N: the tasks taking part let the idle ones (in their barrier) go */
static void release_idle(void)
{
    if (test_comm != MPI_COMM_WORLD) {
        MPI_Comm_free(&test_comm);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    params_t p;
    ctx_t c;
    parse_args(&p, argc, argv);

    MPI_Init(&argc, &argv);
    memset(&c, 0, sizeof c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.ntasks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* -N, as IOR: the first N tasks take part, the others wait in a barrier
     * until they are done (an application's phase of fewer processes than it
     * has: its idle processes wait in MPI, on the same cores) */
    int world = c.ntasks;
    if (p.num_tasks > world) {
        if (c.rank == 0)
            fprintf(stderr, PROG ": warning: -N %d: only %d tasks were launched; all take part\n",
                    p.num_tasks, world);
        p.num_tasks = 0;
    }
    test_comm = MPI_COMM_WORLD;
    open_comm = MPI_COMM_WORLD;
    if (p.num_tasks > 0 && p.num_tasks < world) {
        MPI_Comm_split(MPI_COMM_WORLD, c.rank < p.num_tasks ? 0 : MPI_UNDEFINED, c.rank, &test_comm);
        if (test_comm == MPI_COMM_NULL) {
            if (p.idle_open)
                idle_tasks(&p);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Finalize();
            return 0;
        }
        MPI_Comm_size(test_comm, &c.ntasks);
        if (!p.idle_open)
            open_comm = test_comm;
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    clock_init(&c);
    describe_placement(&p, &c);
    if (c.rank == 0) {
        for (int i = 0; i < nwarnings; i++)
            fprintf(stderr, PROG ": warning: %s\n", warnings[i]);
        now_string(c.began, sizeof c.began);
        struct utsname u;
        if (uname(&u) == 0) {
            snprintf(c.machine, sizeof c.machine, "%s %s", u.sysname, u.nodename);
            snprintf(c.platform, sizeof c.platform, "%s(%s)", u.nodename, u.sysname);
        } else {
            snprintf(c.machine, sizeof c.machine, "Unknown");
            snprintf(c.platform, sizeof c.platform, "Unknown");
        }
        if (p.api == API_MPIIO) {
            int v, sv;
            MPI_Get_version(&v, &sv);
            snprintf(c.api_version, sizeof c.api_version, "(%d.%d)", v, sv);
        }
    }

    if (p.names) { /* -o is the directory of the application-named files */
        int failed = 0;
        if (c.rank == 0 && mkdir(p.path, 0775) != 0 && errno != EEXIST) {
            fprintf(stderr, PROG ": cannot make the directory %s (-o, for --iomodel.names): %s\n",
                    p.path, strerror(errno));
            failed = 1;
        }
        MPI_Bcast(&failed, 1, MPI_INT, 0, test_comm);
        if (failed) {
            announce(&p, 0);
            release_idle();
            MPI_Finalize();
            return 1;
        }
    }

    /* text on stdout, unless the JSON summary goes there (JSON without a file) */
    int text = !(p.format == FMT_JSON && !p.summary_file);
    if (c.rank == 0 && text)
        text_header(stdout, &p, &c);

    void *base = NULL;
    int status = 0;
    if (posix_memalign(&base, 4096, (size_t)(p.xfer + p.buffer_offset)) != 0) {
        fprintf(stderr, PROG ": rank %d: cannot allocate a transfer buffer of %lld bytes\n", c.rank,
                p.xfer);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    void *buf = (char *)base + p.buffer_offset;
    for (long long i = 0; i < p.xfer / 8; i++) { /* a pattern that names the rank and the word */
        uint64_t v = ((uint64_t)c.rank << 48) ^ (uint64_t)i ^ 0x5a5a5a5a00000000ULL;
        memcpy((char *)buf + 8 * i, &v, sizeof v); /* buf may be unaligned */
    }

    point_t *res[2] = {calloc((size_t)p.reps, sizeof(point_t)), calloc((size_t)p.reps, sizeof(point_t))};
    int rep = 0;
    for (; rep < p.reps && !status; rep++) {
        file_t held = {0};
        if (p.do_write) {
            announce(&p, WRITE + 1);
            status = run_phase(&p, &c, WRITE, buf, &res[WRITE][rep], p.reread ? &held : NULL);
            if (!status && c.rank == 0 && text)
                text_result(stdout, &p, WRITE, &res[WRITE][rep], rep);
        }
        if (!status && p.do_read) {
            announce(&p, READ + 1);
            status = run_phase(&p, &c, READ, buf, &res[READ][rep], p.reread ? &held : NULL);
            if (!status && c.rank == 0 && text)
                text_result(stdout, &p, READ, &res[READ][rep], rep);
        }
        if (!p.keep) /* as IOR: remove the file(s) after each repetition (or set them aside) */
            end_repetition(&p, &c, rep);
    }
    announce(&p, 0);
    if (p.fresh)
        remove_aside(&p, &c, rep);

    if (!p.keep && p.names && c.rank == 0)
        rmdir(p.path); /* the replay's directory, when nothing else is in it */

    if (!status && c.rank == 0) {
        if (text)
            text_summary(stdout, &p, &c, res);
        if (p.format == FMT_JSON || p.summary_file) {
            FILE *o = stdout;
            if (p.summary_file && !(o = fopen(p.summary_file, "w"))) {
                fprintf(stderr, PROG ": cannot write the summary file %s: %s\n", p.summary_file,
                        strerror(errno));
                status = 1;
            } else {
                if (p.format == FMT_JSON)
                    json_summary(o, &p, &c, res);
                else
                    text_summary(o, &p, &c, res);
                if (o != stdout && fclose(o) != 0) {
                    fprintf(stderr, PROG ": cannot write the summary file %s: %s\n", p.summary_file,
                            strerror(errno));
                    status = 1;
                }
            }
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, test_comm);
    release_idle();
    free(base);
    free(res[0]);
    free(res[1]);
    MPI_Finalize();
    return status;
}
