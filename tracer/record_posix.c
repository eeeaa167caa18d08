/* Recording the application's own POSIX and stdio calls (posix_macros.h):
 * opens of followed paths, data accesses at the positions the tracer keeps
 * for descriptors and streams, and what moved a stream unseen. */
#define _GNU_SOURCE
#include "runtime_shared.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

static int stdio_flags(const char *mode)
{
    int plus = mode && strchr(mode, '+') != NULL;
    switch (mode ? mode[0] : 'r') {
    case 'w': return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC;
    case 'a': return (plus ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND;
    default: return plus ? O_RDWR : O_RDONLY;
    }
}

/* An open (fd >= 0) or a failed one (fd < 0) of a followed path: an event, and
 * the open's record with the descriptor's slot, or the path; spos: a stream's
 * position (-1: a descriptor's open). */
static void p_open(int op, int f, int dirfd, const char *path, int flags, int64_t spos,
                   uint64_t t0, uint64_t t1)
{
    if (!path || f >= iom_nfd) return;
    char dir[PATH_MAX], full[PATH_MAX];
    if (dirfd != AT_FDCWD && path[0] != '/') {      /* openat: from its directory */
        if (fd_path(dirfd, dir, sizeof dir) != 0 || full_path(dir, path, full, sizeof full) != 0)
            return;
        path = full;
    }
    if (excluded(path)) return;
    LOCK();
    int slot = f >= 0 ? slot_new() : (int)IOM_NO_SLOT;
    uint64_t seq = push(op, f >= 0 ? 0u : IOM_F_ERROR, slot, 0, 0, t0, t1);
    if (slot != (int)IOM_NO_SLOT) {
        slots[slot].append = (flags & O_APPEND) != 0;
        slots[slot].spos = spos;
        iom_fdslot[f] = slot + 1;
        struct { uint32_t slot; int32_t amode, comm_size, comm_rank; } fixed = {(uint32_t)slot, flags, 1, 0};
        meta_path(META_OPEN, seq, &fixed, sizeof fixed, path);
    } else if (f < 0) {
        struct { uint32_t kind; int32_t amode; } fixed = {PATH_FAILED_OPEN, flags};
        meta_path(META_PATH, seq, &fixed, sizeof fixed, path);
    }
    UNLOCK();
}

void iom_p_open(int op, int f, int dirfd, const char *path, int flags, int err, uint64_t t0, uint64_t t1)
{
    (void)err;
    p_open(op, f, dirfd, path, flags, -1, t0, t1);
}

/* A stream's open: its position from the start (the end of the file for "a",
 * where glibc puts it). */
void iom_s_open(int op, FILE *fp, const char *path, const char *mode, int err, uint64_t t0, uint64_t t1)
{
    (void)err;
    p_open(op, fp ? fileno(fp) : -1, AT_FDCWD, path, stdio_flags(mode), fp ? iom_s_position(fp) : -1,
           t0, t1);
}

void iom_s_fdopen(int op, FILE *fp, int f, const char *mode, int err, uint64_t t0, uint64_t t1)
{
    (void)err;
    if (!fp) return;
    int slot = iom_fd_slot(f);
    int64_t at = iom_s_position(fp);
    if (slot >= 0) {                                 /* a followed descriptor, now a stream */
        LOCK();
        push(op, 0, slot, 0, 0, t0, t1);
        slots[slot].spos = at;
        UNLOCK();
        return;
    }
    char path[PATH_MAX];
    if (fd_path(f, path, sizeof path) == 0 && path[0] == '/')
        p_open(op, f, AT_FDCWD, path, stdio_flags(mode), at, t0, t1);
}

/* freopen: the old file (oldfd, followed if oldslot >= 0) is closed whether or
 * not the new one opens; a NULL path changes the mode of the same file. */
void iom_s_reopen(int op, FILE *fp, int oldfd, int oldslot, const char *path, const char *mode, int err,
                  uint64_t t0, uint64_t t1)
{
    if (!path) {
        if (oldslot >= 0) iom_s_pos(op, fp ? 0u : IOM_F_ERROR, oldslot, -1, fp ? iom_s_position(fp) : -1,
                                    0, 0, t0, t1);
        return;
    }
    if (oldslot >= 0) iom_p_forget(oldfd, oldslot);
    iom_s_open(op, fp, path, mode, err, t0, t1);
}

/* A data access; pos: the offset the call gave, or IOM_CUR for the descriptor's
 * position, which the tracer advances (of an O_APPEND one: asked of the kernel,
 * where each write goes to the end).  rc: the bytes moved, or -1. */
void iom_p_io(int op, unsigned flags, int slot, int64_t pos, int64_t rc, int64_t asked,
              const void *buf, int f, uint64_t t0, uint64_t t1)
{
    LOCK();
    struct slot *s = &slots[slot];
    if (pos == IOM_CUR) {
        if (s->append && (flags & IOM_F_WRITE)) {
            off_t end = sys_lseek(f, 0, SEEK_CUR);
            pos = end >= 0 && rc >= 0 ? end - rc : -1;
            if (end >= 0) s->pos = end;
        } else {
            pos = s->pos;
            if (rc > 0) s->pos += rc;
        }
    }
    if (rc < 0) flags |= IOM_F_ERROR;
    if (pos < 0) flags |= IOM_F_NOPOS;
    note_buffer(buf, push(op, flags, slot, pos, rc >= 0 ? rc : asked, t0, t1));
    UNLOCK();
}

void iom_p_seek(int op, int slot, int64_t rc, int64_t offset, int whence, uint64_t t0, uint64_t t1)
{
    LOCK();
    if (rc >= 0) slots[slot].pos = rc;
    push(op, rc < 0 ? IOM_F_ERROR : 0u, slot, rc >= 0 ? rc : offset, whence, t0, t1);
    UNLOCK();
}

void iom_p_call(int op, unsigned flags, int slot, int64_t a, int64_t b, uint64_t t0, uint64_t t1)
{
    LOCK();
    push(op, flags, slot, a, b, t0, t1);
    UNLOCK();
}

/* A dup of a followed descriptor (rc: the new one, or -1): the new one shares
 * the slot; one it replaced (dup2, dup3) is closed.  op < 0: no event (the call
 * was made while recording was off). */
void iom_p_dup(int op, int rc, int oldfd, int slot, uint64_t t0, uint64_t t1)
{
    LOCK();
    if (op >= 0)
        push(op, rc >= 0 ? 0u : IOM_F_ERROR, slot, rc, 0, t0, t1);
    if (rc >= 0 && rc < iom_nfd && rc != oldfd) {
        if (iom_fdslot[rc])
            forget(rc, iom_fdslot[rc] - 1);
        iom_fdslot[rc] = slot + 1;
        slots[slot].refs++;
    }
    UNLOCK();
}

/* The stream moved from `from` to `to` by calls no traced call accounts for
 * (getc_unlocked inlined by the compiler, putw...): the trace says so. */
static void note_unseen(int slot, int64_t from, int64_t to, uint64_t seq)
{
    struct { uint32_t slot, pad; int64_t from, to; } r = {(uint32_t)slot, 0, from, to};
    size_t total;
    unsigned char *p = meta_begin(META_UNSEEN, sizeof r, seq, &total);
    if (!p) return;
    memcpy(p + sizeof(struct meta_header), &r, sizeof r);
    meta_end(p, total);
}

/* A stream's position as ftello gave it (seen, -1: not asked) checked against
 * the tracer's, at the call `seq`; the tracer's follows it. */
static void check_position(int slot, int64_t seen, uint64_t seq)
{
    struct slot *s = &slots[slot];
    if (seen < 0) return;
    if (s->spos >= 0 && seen != s->spos) note_unseen(slot, s->spos, seen, seq);
    s->spos = seen;
}

/* A data access on a stream, at its position (which the tracer keeps); bytes:
 * what it moved (-1: the move of the position); after: the position it left,
 * asked where the bytes do not tell it (-1: they do), which gives the position
 * it started from, checked against the tracer's. */
void iom_s_io(int op, unsigned flags, int slot, int64_t bytes, int64_t after, const void *buf,
              uint64_t t0, uint64_t t1)
{
    LOCK();
    struct slot *s = &slots[slot];
    int64_t pos = s->spos, seen = -1;
    if (after >= 0 && bytes < 0) bytes = pos >= 0 && after > pos ? after - pos : 0;
    else if (after >= 0) pos = seen = after - bytes;
    uint64_t seq = push(op, flags | (pos < 0 ? IOM_F_NOPOS : 0u), slot, pos, bytes, t0, t1);
    note_buffer(buf, seq);
    check_position(slot, seen, seq);
    s->spos = after >= 0 ? after : pos >= 0 ? pos + bytes : -1;
    UNLOCK();
}

/* A call that reads or sets a stream's position: seen, the position before it
 * (ftello; -1: not asked), checked against the tracer's; after, the position
 * it left (-1: unchanged).  a, b: the event's offset and bytes fields. */
void iom_s_pos(int op, unsigned flags, int slot, int64_t seen, int64_t after, int64_t a, int64_t b,
               uint64_t t0, uint64_t t1)
{
    LOCK();
    check_position(slot, seen, push(op, flags, slot, a, b, t0, t1));
    if (after >= 0) slots[slot].spos = after;
    UNLOCK();
}

/* A close (seen: a stream's position before it, -1 for a descriptor). */
void iom_s_close(int op, int rc, int f, int slot, int64_t seen, uint64_t t0, uint64_t t1)
{
    LOCK();
    check_position(slot, seen, push(op, rc == 0 ? 0u : IOM_F_ERROR, slot, 0, 0, t0, t1));
    if (rc == 0) forget(f, slot);
    UNLOCK();
}

void iom_p_close(int op, int rc, int f, int slot, uint64_t t0, uint64_t t1)
{
    iom_s_close(op, rc, f, slot, -1, t0, t1);
}

void iom_p_forget(int f, int slot)
{
    LOCK();
    forget(f, slot);
    UNLOCK();
}

void iom_p_unlink(int op, int rc, const char *path, uint64_t t0, uint64_t t1)
{
    if (!path || excluded(path)) return;
    LOCK();
    uint64_t seq = push(op, rc == 0 ? 0u : IOM_F_ERROR, IOM_NO_SLOT, 0, 0, t0, t1);
    struct { uint32_t kind; int32_t pad; } fixed = {PATH_DELETE, 0};
    meta_path(META_PATH, seq, &fixed, sizeof fixed, path);
    UNLOCK();
}

/* A stream's position, as the application would read it (the real ftello). */
extern off_t (*iom_real_ftello)(FILE *) IOM_HIDDEN;
int64_t iom_s_position(FILE *fp)
{
    if (!iom_real_ftello) iom_real_ftello = (__typeof__(iom_real_ftello))iom_dlsym_next("ftello");
    int saved = errno;
    int64_t pos = iom_real_ftello(fp);
    errno = saved;
    return pos;
}
