/* Which files the tracer follows: a path is followed unless a prefix, an
 * infix, a suffix or a name leaves it out (docs/commands/trace.md). */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* Which files are followed.  Left out by default: the system's directories and
 * what a loader or an interpreter reads (shared libraries, Python's modules),
 * and the trace itself; /dev/shm is a file system of the user's.  IOMODEL_EXCLUDE
 * and IOMODEL_INCLUDE add prefixes (colon-separated); an included prefix wins. */
static const char *const default_exclude[] = {"/proc/", "/sys/", "/dev/", "/etc/", "/usr/", "/lib/",
                                              "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/",
                                              "/boot/", "/run/", "/var/lib/", "/var/cache/", "/var/run/"};
static const char *const default_include[] = {"/dev/shm/"};
static const char *const excluded_suffix[] = {".so", ".py", ".pyc", ".pyo", ".pth", "._pth"};
/* an interpreter's packages and its environment's settings (mpi4py's mpi.cfg,
 * a virtual environment's pyvenv.cfg) */
static const char *const excluded_infix[] = {"/site-packages/", "/dist-packages/", "/__pycache__/",
                                             "/lib/python"};
static const char *const excluded_name[] = {"pyvenv.cfg"};
#define MAX_PREFIXES 64
static char *exclude[MAX_PREFIXES], *include[MAX_PREFIXES];
static int nexclude, ninclude;

/* `path` made absolute from `dir` (the current directory when NULL) and
 * cleaned of "." and ".." and repeated slashes, so that paths and prefixes
 * compare as strings; a trailing slash is kept.  0, or -1 if it does not fit
 * `size` or the current directory is unknown. */
int full_path(const char *dir, const char *path, char *out, size_t size)
{
    char cwd[PATH_MAX], joined[2 * PATH_MAX + 2];
    if (path[0] != '/') {
        if (!dir && !(dir = getcwd(cwd, sizeof cwd))) return -1;
        if ((size_t)snprintf(joined, sizeof joined, "%s/%s", dir, path) >= sizeof joined) return -1;
        path = joined;
    }
    size_t n = 0;                          /* out[0, n): the components so far, each after a '/' */
    for (const char *p = path; *p;) {
        while (*p == '/') p++;
        size_t l = strcspn(p, "/");
        if (l == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && out[--n] != '/') {}   /* back to the last component's slash */
        } else if (l > 0 && !(l == 1 && p[0] == '.')) {
            if (n + l + 3 > size) return -1;
            out[n++] = '/';
            memcpy(out + n, p, l);
            n += l;
        }
        p += l;
    }
    if (n == 0 || path[strlen(path) - 1] == '/') out[n++] = '/';
    out[n] = '\0';
    return 0;
}

static void add_prefix(char **list, int *n, const char *path)
{
    char abs[PATH_MAX];
    if (*path && *n < MAX_PREFIXES && full_path(NULL, path, abs, sizeof abs) == 0)
        list[(*n)++] = strdup(abs);
}

/* A colon-separated list; a relative prefix is taken from the current
 * directory when the library is loaded. */
static void add_prefixes(char **list, int *n, const char *text)
{
    char *copy = text ? strdup(text) : NULL, *save = NULL;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t; t = strtok_r(NULL, ":", &save))
        add_prefix(list, n, t);
    free(copy);
}

static int has_prefix(const char *path, char *const *list, int n)
{
    for (int i = 0; i < n; i++) {
        size_t l = strlen(list[i]);
        /* "/x/" matches /x/... and "/x" matches /x and /x/... but not /xy */
        if (strncmp(path, list[i], l) == 0 &&
            (list[i][l - 1] == '/' || path[l] == '/' || path[l] == '\0'))
            return 1;
    }
    return 0;
}

int excluded(const char *path)
{
    char abs[PATH_MAX];
    if (full_path(NULL, path, abs, sizeof abs) != 0) return 0;   /* a relative path: from where it is opened */
    path = abs;
    if (has_prefix(path, include, ninclude)) return 0;
    if (has_prefix(path, exclude, nexclude)) return 1;
    for (size_t i = 0; i < sizeof excluded_infix / sizeof *excluded_infix; i++)
        if (strstr(path, excluded_infix[i])) return 1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strstr(base, ".so.")) return 1;    /* libfoo.so.1.2 */
    for (size_t i = 0; i < sizeof excluded_name / sizeof *excluded_name; i++)
        if (strcmp(base, excluded_name[i]) == 0) return 1;
    size_t l = strlen(base);
    for (size_t i = 0; i < sizeof excluded_suffix / sizeof *excluded_suffix; i++) {
        size_t k = strlen(excluded_suffix[i]);
        if (l >= k && strcmp(base + l - k, excluded_suffix[i]) == 0) return 1;
    }
    return 0;
}

/* The path a descriptor has (an fdopen'd one, an openat's directory). */
int fd_path(int f, char *out, size_t size)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", f);
    ssize_t n = readlink(link, out, size - 1);
    if (n < 0) return -1;
    out[n] = '\0';
    return 0;
}

/* The prefixes: the defaults, IOMODEL_EXCLUDE and IOMODEL_INCLUDE, the trace itself. */
void follow_init(void)
{
    for (size_t i = 0; i < sizeof default_exclude / sizeof *default_exclude; i++)
        exclude[nexclude++] = (char *)default_exclude[i];
    for (size_t i = 0; i < sizeof default_include / sizeof *default_include; i++)
        include[ninclude++] = (char *)default_include[i];
    add_prefixes(exclude, &nexclude, getenv("IOMODEL_EXCLUDE"));
    add_prefixes(include, &ninclude, getenv("IOMODEL_INCLUDE"));
    const char *dir = getenv("IOMODEL_TRACE_DIR");     /* the trace itself */
    add_prefix(exclude, &nexclude, dir && *dir ? dir : "iomodel-trace");
}
