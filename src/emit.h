/* emit.h — applies a plan: original bytes copied between edits, so untouched code stays
 * byte-identical, then the tail. The caller owns out. */
#ifndef P2S_EMIT_H
#define P2S_EMIT_H

#include "plan.h"
#include "source.h"
#include "strbuf.h"

void p2s_emit(const P2sSource *src, const P2sPlan *plan, P2sStrbuf *out);

#endif
