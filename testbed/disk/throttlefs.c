/* throttlefs: the throttled-disk VC's "device". A FUSE file system showing one
 * file, disk.img, whose reads and writes go to a backing image file and are
 * paced like one disk head: every request occupies the device for
 * latency + bytes / rate, requests queue behind each other (reads and writes
 * alike), and a request returns when its turn on the device has ended.
 *
 * The VC's ext4 sits on a loop device over MOUNTPOINT/disk.img (start.sh). This
 * replaces cgroup blkio throttling, whose 100 ms slices let a whole slice of
 * bytes through at once and then hold a request to the next slice boundary:
 * identical phases of an application took 2 ms or 130 ms depending on the
 * bytes written before them. Here the pace is smooth, with no burst.
 *
 *   throttlefs IMAGE MOUNTPOINT WRITE_BPS READ_BPS LATENCY_US [FUSE options]
 *
 * Runs in the foreground (start.sh records its PID). fsync is not passed on:
 * the testbed keeps no data across restarts, and the host's flushes would add
 * their noise to the device's time.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static const char *FILE_PATH = "/disk.img";
static int image_fd = -1;
static double write_bps, read_bps, latency_s;

/* The device: when it is free again (CLOCK_MONOTONIC seconds). */
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static double device_free_at;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Book the device for one request of `bytes` and wait until its turn has ended. */
static void occupy_device(size_t bytes, double bps)
{
    pthread_mutex_lock(&device_lock);
    double now = now_s();
    double start = now > device_free_at ? now : device_free_at;
    double end = start + latency_s + (bps > 0 ? bytes / bps : 0.0);
    device_free_at = end;
    pthread_mutex_unlock(&device_lock);
    struct timespec until = {(time_t)end, (long)((end - (time_t)end) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
}

static int tfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    memset(st, 0, sizeof *st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    if (strcmp(path, FILE_PATH) != 0)
        return -ENOENT;
    if (fstat(image_fd, st) != 0)
        return -errno;
    st->st_mode = S_IFREG | 0600;
    return 0;
}

static int tfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off, (void)fi, (void)flags;
    if (strcmp(path, "/") != 0)
        return -ENOENT;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    fill(buf, FILE_PATH + 1, NULL, 0, 0);
    return 0;
}

static int tfs_open(const char *path, struct fuse_file_info *fi)
{
    if (strcmp(path, FILE_PATH) != 0)
        return -ENOENT;
    fi->direct_io = 1;   /* no page cache here: every loop request reaches the device */
    return 0;
}

static int tfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path, (void)fi;
    ssize_t n = pread(image_fd, buf, size, off);
    if (n < 0)
        return -errno;
    occupy_device((size_t)n, read_bps);
    return (int)n;
}

static int tfs_write(const char *path, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)path, (void)fi;
    ssize_t n = pwrite(image_fd, buf, size, off);
    if (n < 0)
        return -errno;
    occupy_device((size_t)n, write_bps);
    return (int)n;
}

static int tfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path, (void)datasync, (void)fi;
    return 0;
}

static int tfs_statfs(const char *path, struct statvfs *sv)
{
    (void)path;
    return fstatvfs(image_fd, sv) == 0 ? 0 : -errno;
}

static void *tfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    conn->max_write = 1 << 20;
    cfg->direct_io = 1;
    cfg->attr_timeout = cfg->entry_timeout = 3600;   /* the image's size never changes */
    return NULL;
}

static const struct fuse_operations tfs_ops = {
    .getattr = tfs_getattr, .readdir = tfs_readdir, .open = tfs_open, .read = tfs_read,
    .write = tfs_write, .fsync = tfs_fsync, .statfs = tfs_statfs, .init = tfs_init,
};

static double number(const char *arg, const char *what)
{
    char *end;
    double v = strtod(arg, &end);
    if (*arg == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "throttlefs: %s must be a number >= 0, got '%s'\n", what, arg);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: throttlefs IMAGE MOUNTPOINT WRITE_BPS READ_BPS LATENCY_US [FUSE options]\n");
        return 2;
    }
    write_bps = number(argv[3], "WRITE_BPS");
    read_bps = number(argv[4], "READ_BPS");
    latency_s = number(argv[5], "LATENCY_US") * 1e-6;
    image_fd = open(argv[1], O_RDWR);
    if (image_fd < 0) {
        fprintf(stderr, "throttlefs: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    /* fuse_main's argv: program, mount point, foreground, then the caller's options */
    char *fargv[64] = {argv[0], argv[2], "-f"};
    int fargc = 3;
    for (int i = 6; i < argc && fargc < 63; i++)
        fargv[fargc++] = argv[i];
    return fuse_main(fargc, fargv, &tfs_ops, NULL);
}
