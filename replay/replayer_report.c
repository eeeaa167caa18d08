/*
 * iomodel_replay's reports, in IOR 4.x's formats: the text header, "Results:"
 * rows and "Summary of all tests:" table, and the JSON summary
 * (-O summaryFormat=JSON), which replay/results.py reads as it reads IOR's.
 */
#include "replayer.h"

void now_string(char *buf, size_t n)
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

void text_header(FILE *o, const params_t *p, const ctx_t *c)
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

void text_result(FILE *o, const params_t *p, int access, const point_t *r, int rep)
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

void text_summary(FILE *o, const params_t *p, const ctx_t *c, point_t *res[2])
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

void json_summary(FILE *o, const params_t *p, const ctx_t *c, point_t *res[2])
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
