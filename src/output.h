/* output.h — writing results without ever leaving a partial file. A file is written to a temp
 * file in its own directory, fsynced, renamed over the destination, and the directory fsynced;
 * on any failure the destination is untouched and the temp file removed.
 *
 * A batch does the same for many files with one filesystem sync instead of one fsync each:
 * every temp file is written, the filesystem synced once, then each temp renamed into place.
 * Each output is still whole or absent, never partial. A batch belongs to one thread; batches
 * written on several threads (their temp files created concurrently) are joined with
 * p2s_output_batch_take on one, which flushes them in its own order. */
#ifndef P2S_OUTPUT_H
#define P2S_OUTPUT_H

#include <stddef.h>

#include "array.h"
#include "strbuf.h"

/* Returns 0, or -1 with a one-line reason (naming the path) appended to err. An existing
 * destination keeps its permission bits; a new one gets 0666 less the umask. */
int p2s_output_write_file(const char *path, const char *bytes, size_t len, P2sStrbuf *err);
/* Writes everything to fd (stdout); -1 with a reason in err on a write error. */
int p2s_output_write_fd(int fd, const char *name, const char *bytes, size_t len, P2sStrbuf *err);

typedef struct {
    char *temp, *dest;
    int slot;
} P2sPendingOutput;

typedef struct {
    Array(P2sPendingOutput) pending;
} P2sOutputBatch;

void p2s_output_batch_init(P2sOutputBatch *self);
/* Writes path's temp file now; the rename waits for the next flush (done here when the batch
 * is full). Returns 0, or -1 with reasons in err. */
int  p2s_output_batch_write(P2sOutputBatch *self, const char *path, const char *bytes, size_t len,
                            P2sStrbuf *err);
/* Moves every output pending in from (written by another thread: one batch per thread) to the
 * end of self, in order; from is left empty. Neither flushes. */
void p2s_output_batch_take(P2sOutputBatch *self, P2sOutputBatch *from);
/* Syncs and renames everything pending. Returns 0, or -1 with one reason per failed file. */
int  p2s_output_batch_flush(P2sOutputBatch *self, P2sStrbuf *err);
/* Removes temp files that were never renamed. */
void p2s_output_batch_release(P2sOutputBatch *self);

#endif
