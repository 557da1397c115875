/* deliver.h — what happens to one finished result: written (atomically, and only when it
 * differs from what is there), compared (--check), shown as a diff (--diff), or listed
 * (--list). Shared by the single-file and tree modes. */
#ifndef P2S_DELIVER_H
#define P2S_DELIVER_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "find.h"
#include "output.h"
#include "source.h"
#include "strbuf.h"
#include "transpile.h"

typedef enum {
    P2S_DELIVER_DONE,       /* written, or already up to date */
    P2S_DELIVER_STALE,      /* --check: missing or different */
    P2S_DELIVER_IO_ERROR,   /* reason in err */
} P2sDeliverStatus;

/* dest NULL or "-": standard output. Under --check/--diff nothing is written: bytes are
 * compared with dest's current content, or with input when there is no dest (the question is
 * then whether an in-place run would change the input). With a batch, the file is written
 * through it (renamed at its next flush). */
P2sDeliverStatus p2s_deliver(const P2sOptions *opts, const char *dest, const P2sSource *input,
                             const char *bytes, size_t len, FILE *diff_stream, P2sOutputBatch *batch,
                             P2sStrbuf *err);
/* `name:line:col class NAME` and `name:line:col apply NAME` lines, in source order; a class or
 * site left as written (check.c) ends in ` (left as written)`. */
void p2s_deliver_list(const char *name, const P2sUnit *unit, FILE *stream);

#endif
