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
#include <string.h>
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
/* dprintf: the bytes written, or a negative number */
#define IOM_P_COUNT(NAME, OP, UOP, FLAGS, POS, CALL)                                \
    IOM_P_DATA(NAME, OP, UOP, FLAGS, POS, 0, NULL, CALL)

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

/* stdio: a stream is followed through its descriptor (fileno).  Its position
 * is the stream's own, which counts what sits in its buffer: the tracer keeps
 * it from the bytes each call moved, taken from ftello where a call does not
 * tell it (at the open, after a seek, a call that moved less than asked, a
 * formatted read), as glibc's ftello costs a system call.  What stdio's buffer
 * then writes or reads with its own internal calls is not seen, so not counted
 * twice.  A call that reads or sets the position (seek, tell, rewind, ungetc,
 * close) checks the tracer's against ftello: a difference is a move no traced
 * call made (an inlined getc_unlocked...), and the trace says so.  MPI-IO does
 * not use stdio: these have no lower-layer op (UOP unused). */
static inline int iom_stream_fd(FILE *stream)   /* fflush(NULL): all streams, none of them */
{
    return stream ? fileno(stream) : -1;
}
#define IOM_S_STREAM_FD iom_stream_fd(stream)
#define IOM_S_FOLLOWED(CALL)                                                        \
    int iom_s;                                                                      \
    if (IOM_LIKELY(iom_p_mode() != 1) || (iom_s = iom_fd_slot(IOM_S_STREAM_FD)) < 0) \
        return CALL;

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
/* freopen: the stream's old file is closed (a followed one forgotten), its new
 * one opened on the same stream (a standard stream reopened on a file is
 * followed from then on). */
#define IOM_S_REOPEN(NAME, OP, UOP, CALL)                                           \
    IOM_P_REAL(NAME)                                                                \
    if (IOM_LIKELY(iom_p_mode() != 1)) return CALL;                                 \
    int iom_ofd = IOM_S_STREAM_FD, iom_os = iom_fd_slot(iom_ofd);                   \
    IOM_P_TIMED(CALL)                                                               \
    iom_s_reopen(OP, iom_rc, iom_ofd, iom_os, path, mode, iom_err, iom_t0, iom_t1); \
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
    int64_t iom_seen = iom_s_position(stream);                                      \
    IOM_P_TIMED(CALL)                                                               \
    iom_s_close(OP, iom_rc, iom_fd, iom_s, iom_seen, iom_t0, iom_t1);               \
    IOM_P_DONE

/* A data access on a followed stream.  BYTES: what the call moved, given its
 * result iom_rc (-1: the move of the position, asked of ftello after the
 * call); SHORT: it moved less than it was asked (the end of the file, or an
 * error, which ferror tells apart), so the position is asked of ftello. */
#define IOM_S_DATA(NAME, OP, FLAGS, BYTES, SHORT, BUF, CALL)                        \
    IOM_P_REAL(NAME)                                                                \
    IOM_S_FOLLOWED(CALL)                                                            \
    IOM_P_TIMED(CALL)                                                               \
    int iom_short = (SHORT);                                                        \
    iom_s_io(OP, (FLAGS) | (iom_short && ferror(stream) ? IOM_F_ERROR : 0u), iom_s,  \
             (int64_t)(BYTES), iom_short ? iom_s_position(stream) : -1, BUF, iom_t0, iom_t1); \
    IOM_P_DONE
/* fread, fwrite: elements of `size` bytes */
#define IOM_S_IO(NAME, OP, FLAGS, CALL)                                             \
    IOM_S_DATA(NAME, OP, FLAGS, iom_rc * size, iom_rc < nmemb, ptr, CALL)
/* fputc, getc...: a character, or EOF */
#define IOM_S_CHAR(NAME, OP, FLAGS, CALL)                                           \
    IOM_S_DATA(NAME, OP, FLAGS, iom_rc != EOF, iom_rc == EOF, NULL, CALL)
/* fputs: the string s, or EOF; puts: s and a newline (NL 1) */
#define IOM_S_PUTS(NAME, OP, FLAGS, NL, CALL)                                       \
    IOM_S_DATA(NAME, OP, FLAGS, iom_rc != EOF ? strlen(s) + (NL) : 0, iom_rc == EOF, NULL, CALL)
/* fgets: the string read, or NULL */
#define IOM_S_GETS(NAME, OP, FLAGS, CALL)                                           \
    IOM_S_DATA(NAME, OP, FLAGS, iom_rc ? strlen(iom_rc) : 0, !iom_rc, NULL, CALL)
/* fprintf, getline...: the bytes moved, or a negative number */
#define IOM_S_COUNT(NAME, OP, FLAGS, CALL)                                          \
    IOM_S_DATA(NAME, OP, FLAGS, iom_rc > 0 ? iom_rc : 0, iom_rc < 0, NULL, CALL)
/* fscanf: the bytes it consumed, from the position it left */
#define IOM_S_SCAN(NAME, OP, FLAGS, CALL)                                           \
    IOM_S_DATA(NAME, OP, FLAGS, -1, 1, NULL, CALL)

/* A call that moves the position: ERR, given iom_rc, it failed; AFTER, the
 * position it left (iom_seen: the position before it); A and B the event's
 * offset and bytes fields. */
#define IOM_S_MOVE(NAME, OP, ERR, AFTER, A, B, CALL)                                \
    IOM_P_REAL(NAME)                                                                \
    IOM_S_FOLLOWED(CALL)                                                            \
    int64_t iom_seen = iom_s_position(stream);                                      \
    IOM_P_TIMED(CALL)                                                               \
    int64_t iom_after = (ERR) ? -1 : (int64_t)(AFTER);                              \
    iom_s_pos(OP, (ERR) ? IOM_F_ERROR : 0u, iom_s, iom_seen, iom_after, A, B, iom_t0, iom_t1); \
    IOM_P_DONE
#define IOM_S_SEEK(NAME, OP, UOP, CALL)                                             \
    IOM_S_MOVE(NAME, OP, iom_rc != 0,                                               \
               whence == SEEK_SET ? (int64_t)offset                                 \
               : whence == SEEK_CUR && iom_seen >= 0 ? iom_seen + (int64_t)offset   \
               : iom_s_position(stream),                                            \
               iom_after >= 0 ? iom_after : (int64_t)offset, whence, CALL)
#define IOM_S_SETPOS(NAME, OP, UOP, CALL)                                           \
    IOM_S_MOVE(NAME, OP, iom_rc != 0, iom_s_position(stream), iom_after, SEEK_SET, CALL)
#define IOM_S_REWIND(NAME, OP, UOP, CALL)                                           \
    IOM_S_MOVE(NAME, OP, 0, 0, 0, SEEK_SET, CALL)
#define IOM_S_UNGET(NAME, OP, UOP, CALL)                                            \
    IOM_S_MOVE(NAME, OP, iom_rc == EOF, iom_seen > 0 ? iom_seen - 1 : iom_seen, iom_after, 0, CALL)
/* ftell: the position, which the tracer's is checked against */
#define IOM_S_TELL(NAME, OP, UOP, CALL)                                             \
    IOM_P_REAL(NAME)                                                                \
    IOM_S_FOLLOWED(CALL)                                                            \
    IOM_P_TIMED(CALL)                                                               \
    iom_s_pos(OP, iom_rc < 0 ? IOM_F_ERROR : 0u, iom_s, (int64_t)iom_rc, -1, (int64_t)iom_rc, 0, \
              iom_t0, iom_t1);                                                      \
    IOM_P_DONE
#define IOM_S_CALL(NAME, OP, UOP, CALL)                                             \
    IOM_P_REAL(NAME)                                                                \
    IOM_S_FOLLOWED(CALL)                                                            \
    IOM_P_TIMED(CALL)                                                               \
    iom_p_call(OP, 0u, iom_s, (int64_t)iom_rc, 0, iom_t0, iom_t1);                  \
    IOM_P_DONE

#endif
