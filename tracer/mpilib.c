/* Which MPI library the process runs: the real MPI routines are taken from
 * it at MPI_Init, and an MPI of the other ABI family is left untraced. */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

/* The ABI family the tracer was built for, and those of the MPI libraries in
 * the process: told apart by MPI_Get_library_version, which every MPI lets be
 * called before MPI_Init and whose arguments every MPI passes alike.  The
 * tracer brings its own MPI library along; an application of the other family
 * brings its own too, and must get its own calls, untouched. */
#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI"
#else
#define BUILT_FOR "MPICH"
#endif
static const char *family_of(const char *version)
{
    if (strstr(version, "Open MPI")) return "Open MPI";
    if (strstr(version, "MPICH") || strstr(version, "Intel(R) MPI") || strstr(version, "MVAPICH"))
        return "MPICH";
    return NULL;                        /* an MPI we cannot name: trusted to be the one built for */
}

#define MAX_MPI_LIBS 4
struct mpi_libs { void *fn[MAX_MPI_LIBS]; int n; };

/* dl_iterate_phdr: each loaded object's MPI_Get_library_version, once */
static int find_mpi_lib(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct mpi_libs *libs = data;
    if (!info->dlpi_name || !*info->dlpi_name) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    void *fn = dlsym(h, "PMPI_Get_library_version");
    dlclose(h);
    for (int i = 0; fn && i < libs->n; i++)
        if (libs->fn[i] == fn) return 0;
    if (fn && libs->n < MAX_MPI_LIBS) libs->fn[libs->n++] = fn;
    return 0;
}

static void *mpi_lib;                   /* the application's MPI library */
int mpi_unusable;                /* what the tracer needs of it is missing */
static void *find_in_mpi_lib(const char *name) { return dlsym(mpi_lib, name); }
#ifdef OPEN_MPI
MPI_Comm iom_comm_world;
MPI_Datatype iom_int;
MPI_Op iom_sum;
MPI_Datatype iom_byte;
MPI_Info iom_info_null;

/* An MPI object's address as the application sees it: the global lookup
 * first, since a program that names MPI_COMM_WORLD holds the copy of it its
 * MPI library uses too; the library itself when an interpreter loaded it
 * privately. */
static void *find_data(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    return p || !mpi_lib ? p : dlsym(mpi_lib, name);
}
#endif

/* At MPI_Init, before the real one: every real MPI routine is taken from the
 * application's MPI library, loaded by now even when an interpreter loaded it
 * late (mpi4py).  If that MPI is of the other ABI family, every MPI call goes
 * to it untouched (iom_foreign), the process runs untraced, and
 * DIR/mpi-mismatch.txt says why, for `iomodel trace` to report. */
void iom_check_mpi(void)
{
    static int checked;
    if (checked) return;
    checked = 1;
    struct mpi_libs libs = {{0}, 0};
    dl_iterate_phdr(find_mpi_lib, &libs);
    Dl_info where = {0};
    if (libs.n && dladdr(libs.fn[0], &where) && where.dli_fname &&
        (mpi_lib = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
        iom_resolve_mpi(find_in_mpi_lib);
    static char version[16384];         /* MPICH's MPI_MAX_LIBRARY_VERSION_STRING is 8192 */
    int len = 0;
    if (!iom_real_MPI_Get_library_version || iom_real_MPI_Get_library_version(version, &len) != MPI_SUCCESS)
        version[0] = 0;
    version[sizeof version - 1] = 0;
    const char *family = family_of(version);
    if (family && strcmp(family, BUILT_FOR) != 0) {
        iom_foreign = 1;
        LOCK();
        iom_pon = 0;
        nonmpi = 0;
        ev_n = meta_n = 0;
        ev_seq = 0;
        UNLOCK();
        if (!ev_buf) return;            /* IOMODEL_DISABLE: nothing to say */
        char note[1024];
        int n = snprintf(note, sizeof note, "built for %s; the application runs %.*s (%s)\n", BUILT_FOR,
                         (int)strcspn(version, "\n,"), version,
                         where.dli_fname ? where.dli_fname : "its MPI library");
        const char *dir = getenv("IOMODEL_TRACE_DIR");
        char path[4096];
        snprintf(path, sizeof path, "%s/mpi-mismatch.txt", dir && *dir ? dir : "iomodel-trace");
        sys_mkdir(dir && *dir ? dir : "iomodel-trace", 0777);
        int f = sys_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (f >= 0) {
            struct iovec v = {note, n < (int)sizeof note ? (size_t)n : sizeof note - 1};
            sys_writev(f, &v, 1);
            sys_close(f);
        }
        return;
    }
#ifdef OPEN_MPI
    iom_comm_world = (MPI_Comm)find_data("ompi_mpi_comm_world");
    iom_int = (MPI_Datatype)find_data("ompi_mpi_int");
    iom_sum = (MPI_Op)find_data("ompi_mpi_op_sum");
    iom_byte = (MPI_Datatype)find_data("ompi_mpi_byte");
    iom_info_null = (MPI_Info)find_data("ompi_mpi_info_null");
    mpi_unusable = !iom_comm_world || !iom_int || !iom_sum;
#endif
    mpi_unusable |= !iom_real_MPI_Comm_rank || !iom_real_MPI_Comm_size || !iom_real_MPI_Allreduce ||
                    !iom_real_MPI_Barrier;
}
