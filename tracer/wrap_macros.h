/* One macro per routine class of wrappers.tmpl: the body of every generated
 * wrapper.  Each refers to the routine's parameters by their mpi.h names
 * (gen_wrappers.py checks they exist) and to CALL, the call of the real PMPI_X.
 *
 * The pattern is always the same: when tracing is off or we are already inside
 * a traced call (iom_depth, per thread, so calls MPI makes internally are
 * neither recorded nor counted), forward; otherwise time the real call and
 * record it.  Return codes, statuses and requests pass through untouched. */
#ifndef IOMODEL_WRAP_MACROS_H
#define IOMODEL_WRAP_MACROS_H

#include "runtime.h"

#include <stdlib.h>

#define IOM_POS_AT ((int64_t)offset)
#define IOM_POS_IND iom_pos_individual(fh)
#define IOM_POS_SHARED iom_pos_shared(fh)

/* An exported MPI_X/PMPI_X: nothing but two tail calls, so that its arguments
 * reach either callee in the registers the caller filled.  In a process whose
 * MPI is of the other ABI family (iom_foreign) a handle may be wider than this
 * mpi.h's type: only an untouched register passes it on whole. */
#define IOM_NOINLINE __attribute__((noinline))
#define IOM_FORWARD(REAL, TRACED)                   \
    if (IOM_UNLIKELY(iom_foreign)) return REAL;     \
    return TRACED;

#define IOM_PASS_IF_IDLE(CALL)                      \
    if (IOM_UNLIKELY(iom_depth != 0 || !iom_on))    \
        return CALL;

#define IOM_TIMED(CALL)                             \
    iom_depth = 1;                                  \
    uint64_t iom_t0 = iom_ticks();                  \
    int iom_rc = CALL;                              \
    uint64_t iom_t1 = iom_ticks();

#define IOM_DONE                                    \
    iom_depth = 0;                                  \
    return iom_rc;

#define IOM_ERRFLAG (iom_rc != MPI_SUCCESS ? IOM_F_ERROR : 0u)

/* Life cycle: tracing starts after the real MPI_Init and stops before the real
 * MPI_Finalize; MPI_Abort flushes first, since it does not return.  Before
 * the real MPI_Init, iom_check_mpi makes sure it is the application's MPI. */
#define IOM_INIT(OP, CALL)                                          \
    if (iom_depth != 0) return CALL;                                \
    iom_check_mpi();                                                \
    if (iom_foreign) return CALL;                                   \
    IOM_TIMED(CALL)                                                 \
    (void)iom_t1;                                                   \
    if (iom_rc == MPI_SUCCESS) iom_start(OP, iom_t0, MPI_THREAD_SINGLE); \
    IOM_DONE
#define IOM_INIT_THREAD(OP, CALL)                                   \
    if (iom_depth != 0) return CALL;                                \
    iom_check_mpi();                                                \
    if (iom_foreign) return CALL;                                   \
    IOM_TIMED(CALL)                                                 \
    (void)iom_t1;                                                   \
    if (iom_rc == MPI_SUCCESS) iom_start(OP, iom_t0, *provided);    \
    IOM_DONE
/* The real MPI_Finalize and MPI_Abort run with iom_depth 1: what MPI does in
 * them (removing its session files) is not the application's I/O. */
#define IOM_AFTER_STOP(CALL)                                        \
    int iom_d = iom_depth;                                          \
    iom_depth = 1;                                                  \
    int iom_rc = CALL;                                              \
    iom_depth = iom_d;                                              \
    return iom_rc;
#define IOM_FINALIZE(OP, CALL)                                      \
    if (iom_depth == 0 && iom_on) iom_stop(OP, iom_ticks());        \
    IOM_AFTER_STOP(CALL)
#define IOM_ABORT(OP, CALL)                                         \
    if (iom_depth == 0 && iom_on) iom_abort(OP, iom_ticks());       \
    IOM_AFTER_STOP(CALL)

/* Files. */
#define IOM_OPEN(OP, CALL)                                                  \
    IOM_PASS_IF_IDLE(CALL)                                                  \
    IOM_TIMED(CALL)                                                         \
    iom_record_open(OP, iom_rc, comm, filename, amode,                      \
                    iom_rc == MPI_SUCCESS ? *fh : (MPI_File)0, iom_t0, iom_t1); \
    IOM_DONE
#define IOM_CLOSE(OP, CALL)                                                 \
    IOM_PASS_IF_IDLE(CALL)                                                  \
    int iom_slot = iom_slot_of(*fh);                                        \
    IOM_TIMED(CALL)                                                         \
    iom_record_close(OP, iom_rc, iom_slot, iom_t0, iom_t1);                 \
    IOM_DONE
#define IOM_DELETE(OP, CALL)                                                \
    IOM_PASS_IF_IDLE(CALL)                                                  \
    IOM_TIMED(CALL)                                                         \
    iom_record_delete(OP, iom_rc, filename, iom_t0, iom_t1);                \
    IOM_DONE
#define IOM_SET_VIEW(OP, CALL)                                              \
    IOM_PASS_IF_IDLE(CALL)                                                  \
    IOM_TIMED(CALL)                                                         \
    iom_record_view(OP, iom_rc, fh, disp, etype, filetype, datarep, iom_t0, iom_t1); \
    IOM_DONE
#define IOM_FCALL(OP, FLAGS, A, B, CALL)                                    \
    IOM_PASS_IF_IDLE(CALL)                                                  \
    IOM_TIMED(CALL)                                                         \
    iom_record_call(OP, (FLAGS) | IOM_ERRFLAG, fh, A, B, iom_t0, iom_t1);   \
    IOM_DONE

/* Data access: the position is taken before the call (the call moves file
 * pointers), then the call is timed and RECORD run. */
#define IOM_DATA(POS, CALL, RECORD)                                         \
    IOM_PASS_IF_IDLE(CALL)                                                  \
    iom_depth = 1;                                                          \
    int64_t iom_pos = POS;                                                  \
    IOM_TIMED(CALL)                                                         \
    RECORD;                                                                 \
    IOM_DONE
#define IOM_IO(OP, FLAGS, POS, CALL)                                        \
    IOM_DATA(POS, CALL, iom_record_io(OP, (FLAGS) | IOM_ERRFLAG, fh, iom_pos, \
                                      buf, count, datatype, iom_t0, iom_t1))
#define IOM_IPOST(OP, FLAGS, POS, CALL)                                     \
    IOM_DATA(POS, CALL, iom_record_post(OP, (FLAGS) | IOM_F_POST | IOM_ERRFLAG, fh, \
                                        iom_pos, buf, count, datatype, iom_t0, iom_t1, \
                                        iom_rc == MPI_SUCCESS ? *request : IOM_NO_REQUEST))
#define IOM_BEGIN(OP, FLAGS, POS, CALL)                                     \
    IOM_DATA(POS, CALL, iom_record_begin(OP, (FLAGS) | IOM_F_POST | IOM_ERRFLAG, fh, \
                                         iom_pos, buf, count, datatype, iom_t0, iom_t1))
#define IOM_END(OP, CALL)                                                   \
    IOM_PASS_IF_IDLE(CALL)                                                  \
    IOM_TIMED(CALL)                                                         \
    iom_record_end(OP, fh, iom_t0, iom_t1);                                 \
    IOM_DONE

/* Completion of nonblocking I/O requests.  Nothing to do while none is
 * pending, which keeps Wait/Test on communication requests at full speed. */
#define IOM_WAITLIKE(N, REQS, CALL, WHICH)                                  \
    if (IOM_UNLIKELY(iom_depth != 0 || !iom_on || iom_npending == 0))       \
        return CALL;                                                        \
    MPI_Request iom_local[16];                                              \
    MPI_Request *iom_saved = iom_save_requests(N, REQS, iom_local, 16);     \
    IOM_TIMED(CALL)                                                         \
    if (iom_rc == MPI_SUCCESS) { WHICH }                                    \
    if (iom_saved != iom_local) free(iom_saved);                            \
    IOM_DONE

#define IOM_WAIT_ONE(OP, CALL) \
    IOM_WAITLIKE(1, request, CALL, iom_complete(OP, iom_saved, 1, NULL, iom_t0, iom_t1);)
#define IOM_TEST_ONE(OP, CALL) \
    IOM_WAITLIKE(1, request, CALL, if (*flag) iom_complete(OP, iom_saved, 1, NULL, iom_t0, iom_t1);)
#define IOM_WAIT_ALL(OP, CALL) \
    IOM_WAITLIKE(count, array_of_requests, CALL, \
                 iom_complete(OP, iom_saved, count, NULL, iom_t0, iom_t1);)
#define IOM_TEST_ALL(OP, CALL) \
    IOM_WAITLIKE(count, array_of_requests, CALL, \
                 if (*flag) iom_complete(OP, iom_saved, count, NULL, iom_t0, iom_t1);)
#define IOM_WAIT_ANY(OP, CALL) \
    IOM_WAITLIKE(count, array_of_requests, CALL, \
                 if (*index != MPI_UNDEFINED) iom_complete(OP, iom_saved, 1, index, iom_t0, iom_t1);)
#define IOM_TEST_ANY(OP, CALL) \
    IOM_WAITLIKE(count, array_of_requests, CALL, \
                 if (*flag && *index != MPI_UNDEFINED) iom_complete(OP, iom_saved, 1, index, iom_t0, iom_t1);)
#define IOM_WAIT_SOME(OP, CALL) \
    IOM_WAITLIKE(incount, array_of_requests, CALL, \
                 if (*outcount != MPI_UNDEFINED) iom_complete(OP, iom_saved, *outcount, array_of_indices, iom_t0, iom_t1);)
#define IOM_TEST_SOME(OP, CALL) IOM_WAIT_SOME(OP, CALL)
#define IOM_REQUEST_FREE(OP, CALL)                                          \
    (void)(OP);                                                             \
    if (iom_npending != 0 && iom_on) iom_forget_request(*request);          \
    return CALL;

/* Communication: counted once by the logical clock, never recorded. */
#define IOM_COMM(CALL)                                                      \
    if (IOM_UNLIKELY(iom_depth != 0)) return CALL;                          \
    iom_count_comm();                                                       \
    iom_depth = 1;                                                          \
    int iom_rc = CALL;                                                      \
    iom_depth = 0;                                                          \
    return iom_rc;

#endif
