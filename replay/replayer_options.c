/*
 * iomodel_replay's command line: IOR's options and its rules for them, the
 * extensions (--iomodel.*), and the test files' names they give.
 */
#include "replayer.h"

static char warnings[MAX_WARNINGS][256];
static int nwarnings;

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
           "  -Z  read the data of a task picked at random (-Q N: at least N nodes away; -X SEED)\n"
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
           "  --iomodel.gapEvery=K  the gap and its barrier before every K-th segment only\n"
           "                   (default 1): each of the application's phases is K segments\n"
           "  --iomodel.think=S  compute (spin) S seconds before every transfer but the first\n"
           "                   (with --iomodel.gap: but the first after each gap), the application's\n"
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

/* IOR's -X: any int (a negative seed is offset by the repetition) */
static int seed_arg(const char *opt, const char *val)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (!*val || *end || errno || v < INT_MIN + 1 || v > INT_MAX)
        usage_error("bad value '%s' for %s: expected an integer", val, opt);
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

void parse_args(params_t *p, int argc, char **argv)
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
    p->gap_every = 1;
    p->argc = argc;
    p->argv = argv;

    /* IOR options iomodel_replay does not implement: flags and options with a value */
    const char *ignored_flags = "KmuWRxy";
    const char *ignored_valued = "DGjlMT";
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
                strcmp(name, "--iomodel.piece") == 0 || strcmp(name, "--iomodel.bufferOffset") == 0 ||
                strcmp(name, "--iomodel.gapEvery") == 0) {
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
                } else if (strcmp(name, "--iomodel.gapEvery") == 0) {
                    if (parse_size(val, &p->gap_every) != 0 || p->gap_every < 1)
                        usage_error("bad --iomodel.gapEvery=%s: expected a count of segments >= 1", val);
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
        int takes_value = strchr("abtsoiOAQdfNX", c) || strchr(ignored_valued, c);
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
        case 'Z': p->reorder_random = 1; break;
        case 'X': p->reorder_seed = seed_arg(opt, val); break;
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
    if (p->reread && (p->reorder || p->reorder_random || p->existing))
        usage_error("--iomodel.reread cannot take -C, -Z or -E: each task rereads its own data "
                    "through the open its write used");
}

void test_file_name(const params_t *p, int who, char *buf, size_t n)
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

void print_warnings(FILE *o)
{
    for (int i = 0; i < nwarnings; i++)
        fprintf(o, PROG ": warning: %s\n", warnings[i]);
}
