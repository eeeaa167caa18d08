/* One macro per POSIX and stdio routine class of wrappers.tmpl: the body of
 * every generated POSIX wrapper.  Each refers to the routine's parameters by the
 * names the template's prototype gives them, to NAME (its real function is
 * iom_real_NAME, resolved here if a call comes before the library's
 * constructor) and to CALL, the call of the real function.
 *
 * The pattern of wrap_macros.h: a call on a file the tracer does not follow (an
 * excluded path, a socket, a pipe, a descriptor opened before tracing) or made
 * while tracing is off passes through after a table lookup; a call inside a
 * traced MPI call passes through too, or is recorded as its lower layer
 * (IOMODEL_UNDER_MPI=1); otherwise it is timed and recorded.  The recording
 * runs with iom_depth 2, so that nothing it calls is recorded again, and keeps
 * errno as the real call left it.  Return values pass through untouched. */
#ifndef IOMODEL_POSIX_MACROS_H
#define IOMODEL_POSIX_MACROS_H

#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#define IOM_OPEN_NEEDS_MODE(f) (((f) & O_CREAT) != 0 || ((f) & O_TMPFILE) == O_TMPFILE)

static inline int64_t iom_iov_bytes(const struct iovec *iov, int n)
{
    int64_t b = 0;
    for (int i = 0; i < n; i++) b += (int64_t)iov[i].iov_len;
    return b;
}

#define IOM_P_REAL(NAME)                                                            \
    if (IOM_UNLIKELY(!iom_real_##NAME))                                             \
        iom_real_##NAME = (__typeof__(iom_real_##NAME))iom_dlsym_next(#NAME);

/* Time CALL with recording off, keep errno: iom_rc, iom_t0, iom_t1, iom_err. */
#define IOM_P_TIMED(CALL)                                                           \
    int iom_d = iom_depth;                                                          \
    iom_depth = 2;                                                                  \
    uint64_t iom_t0 = iom_ticks();                                                  \
    __typeof__(CALL) iom_rc = CALL;                                                 \
    uint64_t iom_t1 = iom_ticks();                                                  \
    int iom_err = errno;

#define IOM_P_DONE                                                                  \
    iom_depth = iom_d;                                                              \
    errno = iom_err;                                                                \
    return iom_rc;

#define IOM_P_OP(OP, UOP) (iom_m == 2 ? (UOP) : (OP))

/* Opening: the runtime decides whether the path is followed (the excluded
 * prefixes and suffixes) and gives the descriptor a slot. */
#define IOM_P_OPEN_LIKE(NAME, OP, UOP, DIRFD, FLAGS, CALL)                          \
    IOM_P_REAL(NAME)                                                                \
    int iom_m = iom_p_mode();                                                       \
    if (IOM_LIKELY(!iom_m)) return CALL;                                            \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_open(IOM_P_OP(OP, UOP), iom_rc, DIRFD, path, FLAGS, iom_err, iom_t0, iom_t1); \
    IOM_P_DONE
#define IOM_P_OPEN(NAME, OP, UOP, CALL) IOM_P_OPEN_LIKE(NAME, OP, UOP, AT_FDCWD, flags, CALL)
#define IOM_P_OPENAT(NAME, OP, UOP, CALL) IOM_P_OPEN_LIKE(NAME, OP, UOP, dirfd, flags, CALL)
#define IOM_P_CREAT(NAME, OP, UOP, CALL)                                            \
    IOM_P_OPEN_LIKE(NAME, OP, UOP, AT_FDCWD, O_CREAT | O_WRONLY | O_TRUNC, CALL)

/* Closing: a followed descriptor forgets its slot even when the call is not
 * recorded (MPI closing it inside a call), so that a later socket or pipe of the
 * same number is not taken for the file. */
#define IOM_P_CLOSE(NAME, OP, UOP, CALL)                                            \
    IOM_P_REAL(NAME)                                                                \
    int iom_m = iom_p_mode(), iom_s = iom_fd_slot(fd);                              \
    if (IOM_LIKELY(iom_s < 0)) return CALL;                                         \
    if (!iom_m) {                                                                   \
        int iom_r = CALL, iom_e = errno;                                            \
        if (iom_r == 0) iom_p_forget(fd, iom_s);                                    \
        errno = iom_e;                                                              \
        return iom_r;                                                               \
    }                                                                               \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_close(IOM_P_OP(OP, UOP), iom_rc, fd, iom_s, iom_t0, iom_t1);              \
    IOM_P_DONE

/* dup, dup2, dup3: the new descriptor of a followed one shares its slot (its
 * open and its position, as the kernel's file description); a followed
 * descriptor that dup2 or dup3 replaces (NEWFD) is closed. */
#define IOM_P_DUP(NAME, OP, UOP, NEWFD, CALL)                                       \
    IOM_P_REAL(NAME)                                                                \
    int iom_s = iom_fd_slot(oldfd), iom_n = (NEWFD);                                \
    if (IOM_LIKELY(iom_s < 0)) {                                                    \
        int iom_ns = iom_n >= 0 && iom_n != oldfd ? iom_fd_slot(iom_n) : -1;        \
        if (IOM_LIKELY(iom_ns < 0)) return CALL;                                    \
        int iom_r = CALL, iom_e = errno;                                            \
        if (iom_r >= 0) iom_p_forget(iom_n, iom_ns);                                \
        errno = iom_e;                                                              \
        return iom_r;                                                               \
    }                                                                               \
    int iom_m = iom_p_mode();                                                       \
    if (!iom_m) {                                                                   \
        int iom_r = CALL, iom_e = errno;                                            \
        iom_p_dup(-1, iom_r, oldfd, iom_s, 0, 0);                                   \
        errno = iom_e;                                                              \
        return iom_r;                                                               \
    }                                                                               \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_dup(IOM_P_OP(OP, UOP), iom_rc, oldfd, iom_s, iom_t0, iom_t1);             \
    IOM_P_DONE

#define IOM_P_UNLINK(NAME, OP, UOP, CALL)                                           \
    IOM_P_REAL(NAME)                                                                \
    int iom_m = iom_p_mode();                                                       \
    if (IOM_LIKELY(!iom_m)) return CALL;                                            \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_unlink(IOM_P_OP(OP, UOP), iom_rc, path, iom_t0, iom_t1);                  \
    IOM_P_DONE

/* Data access on a followed descriptor: at an offset parameter (POS), or at the
 * descriptor's position (POS = IOM_CUR, which the runtime keeps and advances). */
#define IOM_P_DATA(NAME, OP, UOP, FLAGS, POS, ASKED, BUF, CALL)                     \
    IOM_P_REAL(NAME)                                                                \
    int iom_m = iom_p_mode(), iom_s;                                                \
    if (IOM_LIKELY(!iom_m) || (iom_s = iom_fd_slot(fd)) < 0) return CALL;           \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_io(IOM_P_OP(OP, UOP), FLAGS, iom_s, POS, (int64_t)iom_rc, (int64_t)(ASKED), \
             BUF, fd, iom_t0, iom_t1);                                              \
    IOM_P_DONE
#define IOM_P_IO(NAME, OP, UOP, FLAGS, POS, CALL)                                   \
    IOM_P_DATA(NAME, OP, UOP, FLAGS, POS, count, buf, CALL)
#define IOM_P_IOV(NAME, OP, UOP, FLAGS, POS, CALL)                                  \
    IOM_P_DATA(NAME, OP, UOP, FLAGS, POS, iom_iov_bytes(iov, iovcnt),               \
               iovcnt > 0 ? iov[0].iov_base : NULL, CALL)

#define IOM_P_SEEK(NAME, OP, UOP, CALL)                                             \
    IOM_P_REAL(NAME)                                                                \
    int iom_m = iom_p_mode(), iom_s;                                                \
    if (IOM_LIKELY(!iom_m) || (iom_s = iom_fd_slot(fd)) < 0) return CALL;           \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_seek(IOM_P_OP(OP, UOP), iom_s, (int64_t)iom_rc, (int64_t)offset, whence,  \
               iom_t0, iom_t1);                                                     \
    IOM_P_DONE

#define IOM_P_CALL(NAME, OP, UOP, ARG, CALL)                                        \
    IOM_P_REAL(NAME)                                                                \
    int iom_m = iom_p_mode(), iom_s;                                                \
    if (IOM_LIKELY(!iom_m) || (iom_s = iom_fd_slot(fd)) < 0) return CALL;           \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_call(IOM_P_OP(OP, UOP), iom_rc < 0 ? IOM_F_ERROR : 0u, iom_s, ARG, 0,     \
               iom_t0, iom_t1);                                                     \
    IOM_P_DONE

/* stdio: a stream is followed through its descriptor (fileno); its position is
 * the stream's own (ftello), which counts what sits in its buffer.  MPI-IO
 * does not use stdio: these have no lower-layer op (UOP unused). */
static inline int iom_stream_fd(FILE *stream)   /* fflush(NULL): all streams, none of them */
{
    return stream ? fileno(stream) : -1;
}
#define IOM_S_STREAM_FD iom_stream_fd(stream)

#define IOM_S_OPEN(NAME, OP, UOP, CALL)                                             \
    IOM_P_REAL(NAME)                                                                \
    if (IOM_LIKELY(iom_p_mode() != 1)) return CALL;                                 \
    IOM_P_TIMED(CALL)                                                               \
    iom_s_open(OP, iom_rc, path, mode, iom_err, iom_t0, iom_t1);                    \
    IOM_P_DONE
#define IOM_S_FDOPEN(NAME, OP, UOP, CALL)                                           \
    IOM_P_REAL(NAME)                                                                \
    if (IOM_LIKELY(iom_p_mode() != 1)) return CALL;                                 \
    IOM_P_TIMED(CALL)                                                               \
    iom_s_fdopen(OP, iom_rc, fd, mode, iom_err, iom_t0, iom_t1);                    \
    IOM_P_DONE
#define IOM_S_CLOSE(NAME, OP, UOP, CALL)                                            \
    IOM_P_REAL(NAME)                                                                \
    int iom_fd = IOM_S_STREAM_FD, iom_s = iom_fd_slot(iom_fd);                      \
    if (IOM_LIKELY(iom_s < 0)) return CALL;                                         \
    if (iom_p_mode() != 1) {                                                        \
        int iom_r = CALL, iom_e = errno;                                            \
        if (iom_r == 0) iom_p_forget(iom_fd, iom_s);                                \
        errno = iom_e;                                                              \
        return iom_r;                                                               \
    }                                                                               \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_close(OP, iom_rc, iom_fd, iom_s, iom_t0, iom_t1);                         \
    IOM_P_DONE
#define IOM_S_IO(NAME, OP, FLAGS, CALL)                                             \
    IOM_P_REAL(NAME)                                                                \
    int iom_fd, iom_s;                                                              \
    if (IOM_LIKELY(iom_p_mode() != 1) || (iom_s = iom_fd_slot(iom_fd = IOM_S_STREAM_FD)) < 0) \
        return CALL;                                                                \
    int64_t iom_pos = iom_s_tell(stream);                                           \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_io(OP, (FLAGS) | (iom_rc < nmemb && ferror(stream) ? IOM_F_ERROR : 0u), iom_s, \
             iom_pos, (int64_t)(iom_rc * size), (int64_t)(nmemb * size), ptr, iom_fd,  \
             iom_t0, iom_t1);                                                       \
    IOM_P_DONE
#define IOM_S_SEEK(NAME, OP, UOP, CALL)                                             \
    IOM_P_REAL(NAME)                                                                \
    int iom_s;                                                                      \
    if (IOM_LIKELY(iom_p_mode() != 1) || (iom_s = iom_fd_slot(IOM_S_STREAM_FD)) < 0) \
        return CALL;                                                                \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_call(OP, iom_rc != 0 ? IOM_F_ERROR : 0u, iom_s, (int64_t)offset, whence,  \
               iom_t0, iom_t1);                                                     \
    IOM_P_DONE
#define IOM_S_CALL(NAME, OP, UOP, CALL)                                             \
    IOM_P_REAL(NAME)                                                                \
    int iom_s;                                                                      \
    if (IOM_LIKELY(iom_p_mode() != 1) || (iom_s = iom_fd_slot(IOM_S_STREAM_FD)) < 0) \
        return CALL;                                                                \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_call(OP, 0u, iom_s, (int64_t)iom_rc, 0, iom_t0, iom_t1);                  \
    IOM_P_DONE

#endif
