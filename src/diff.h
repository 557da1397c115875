/* diff.h — unified diff of two byte strings, line by line (Myers' O(ND) algorithm), with three
 * lines of context, as `diff -u` prints it. */
#ifndef P2S_DIFF_H
#define P2S_DIFF_H

#include <stddef.h>

#include "strbuf.h"

/* Appends the diff of a -> b to out under the given labels; nothing when they are equal. */
void p2s_diff_unified(const char *a, size_t a_len, const char *b, size_t b_len,
                      const char *a_label, const char *b_label, P2sStrbuf *out);

#endif
