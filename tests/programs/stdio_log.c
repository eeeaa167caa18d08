/* stdio_log.c -- a text log written and read back with formatted and
 * character stdio calls, as codes write their logs and read their input decks;
 * standard output reopened on a file; a descriptor written with dprintf.
 *
 * usage: stdio_log OUTDIR      (at most 10 ranks: one digit each)
 *
 * Each rank r writes OUTDIR/log.r, 15 calls, 175 bytes (offsets in brackets):
 *    1  fprintf "rank %d of %d\n"           12 B  [0]
 *  2-5  fprintf "step %d: t=%6.3f\n" x4      17 B  [12, 29, 46, 63]
 *    6  fputs "--------\n"                    9 B  [80]
 *    7  fputc '['  8 putc 'x'  9 putc_unlocked ']'  10 fputc '\n'   1 B each [89..92]
 *   11  vfprintf (log_line) "%s=%d\n"         8 B  [93]   "steps=4\n"
 *   12  fwrite 16 bytes "0123456789abcdef"   16 B  [101]
 *   13  fprintf "%s %s\n"                    10 B  [117]  "wall time\n"
 *   14  fprintf "%08x\n"                      9 B  [127]  "deadbeef\n"
 *   15  fputs "the log of this rank ends here. Bye!!!\n"   39 B  [136]
 * (the compiler may turn a call into another: fputs of a constant into fwrite)
 * then reads it back, checking every byte, 16 calls, 176 bytes:
 *    fgets 12 B [0]; fscanf "step %d: t=%lf\n" x4, 17 B each [12..63];
 *    getline 9 B [80]; getc '[' [89]; ungetc '['; fgetc '[' [89]; getc 'x' [90];
 *    getc_unlocked ']' [91]; fgetc '\n' [92]; fread 24 B [93];
 *    fgets 10 B [117], 9 B [127], 39 B [136]; fgets at the end: NULL, 0 B [175]
 * Standard output reopened on OUTDIR/out.r (freopen): printf "rank %d done\n"
 * 12 B [0], puts "bye" 4 B [12], putchar '!' 1 B [16].
 * OUTDIR/fd.r through a descriptor: dprintf "value %d\n" 9 B [0], write "x\n" 2 B [9].
 * Any mismatch aborts.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr, "stdio_log: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void log_line(FILE *f, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    if (vfprintf(f, format, ap) < 0) die("vfprintf");
    va_end(ap);
}

static void expect(const char *got, const char *want)
{
    if (!got || strcmp(got, want) != 0) die(want);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || nprocs > 10) {
        fprintf(stderr, "usage: stdio_log OUTDIR (at most 10 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096], line[128], want[128];
    snprintf(path, sizeof path, "%s/log.%d", argv[1], rank);
    FILE *f = fopen(path, "w");
    if (!f) die("fopen w");
    fprintf(f, "rank %d of %d\n", rank, nprocs);
    for (int i = 1; i <= 4; i++) fprintf(f, "step %d: t=%6.3f\n", i, i * 0.25);
    fputs("--------\n", f);
    fputc('[', f);
    putc('x', f);
    putc_unlocked(']', f);
    fputc('\n', f);
    log_line(f, "%s=%d\n", "steps", 4);
    if (fwrite("0123456789abcdef", 1, 16, f) != 16) die("fwrite");
    fprintf(f, "%s %s\n", "wall", "time");
    fprintf(f, "%08x\n", 0xdeadbeefu);
    fputs("the log of this rank ends here. Bye!!!\n", f);
    if (fclose(f) != 0) die("fclose w");

    f = fopen(path, "r");
    if (!f) die("fopen r");
    snprintf(want, sizeof want, "rank %d of %d\n", rank, nprocs);
    expect(fgets(line, sizeof line, f), want);
    for (int i = 1; i <= 4; i++) {
        int step = 0;
        double t = 0;
        if (fscanf(f, "step %d: t=%lf\n", &step, &t) != 2 || step != i || t != i * 0.25) die("fscanf");
    }
    char *text = NULL;
    size_t cap = 0;
    if (getline(&text, &cap, f) != 9) die("getline");
    expect(text, "--------\n");
    free(text);
    int c1 = getc(f);
    if (c1 != '[' || ungetc(c1, f) != '[' || fgetc(f) != '[' || getc(f) != 'x' || getc_unlocked(f) != ']' ||
        fgetc(f) != '\n')
        die("characters");
    char bytes[25] = {0};
    if (fread(bytes, 1, 24, f) != 24 || memcmp(bytes, "steps=4\n0123456789abcdef", 24)) die("fread");
    expect(fgets(line, sizeof line, f), "wall time\n");
    expect(fgets(line, sizeof line, f), "deadbeef\n");
    expect(fgets(line, sizeof line, f), "the log of this rank ends here. Bye!!!\n");
    if (fgets(line, sizeof line, f) != NULL || !feof(f)) die("fgets at the end");
    fclose(f);

    snprintf(path, sizeof path, "%s/out.%d", argv[1], rank);
    if (!freopen(path, "w", stdout)) die("freopen");
    printf("rank %d done\n", rank);
    puts("bye");
    putchar('!');
    fflush(stdout);

    snprintf(path, sizeof path, "%s/fd.%d", argv[1], rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || dprintf(fd, "value %d\n", 42) != 9 || write(fd, "x\n", 2) != 2 || close(fd) != 0)
        die("dprintf");
    MPI_Finalize();
    return 0;
}
