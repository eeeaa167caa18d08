/* serial_stdio.c -- a program without MPI: a serial pre- or post-processing
 * step, traced on its own (rank 0 of 1).
 *
 *   fopen(OUTDIR/serial.dat, "w"); 3 x fwrite(1000 B); fclose
 *   fopen("/etc/hostname", "r"); fread; fclose      (a system file: left out)
 *   system("cat OUTDIR/serial.dat > OUTDIR/copy.dat")   (a child process: not traced)
 *   open(OUTDIR/serial.dat, O_RDONLY); read(3000 B); close
 *
 * usage: serial_stdio OUTDIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: serial_stdio OUTDIR\n");
        return 2;
    }
    char path[4096], cmd[9000], buf[3000], host[256];
    snprintf(path, sizeof path, "%s/serial.dat", argv[1]);
    memset(buf, 'x', sizeof buf);
    FILE *f = fopen(path, "w");
    for (int k = 0; k < 3; k++)
        if (!f || fwrite(buf + 1000 * k, 1, 1000, f) != 1000) return 1;
    fclose(f);
    f = fopen("/etc/hostname", "r");
    if (f) {
        if (!fread(host, 1, sizeof host, f)) host[0] = 0;
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "cat %s > %s/copy.dat", path, argv[1]);
    if (system(cmd) != 0) return 1;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) return 1;
    close(fd);
    return 0;
}
