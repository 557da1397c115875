/* externals.h — the PyLayer classes other modules export, as one module's finder sees them:
 * by qualified name, whether each is left as written there (a contract error), and its
 * forward's signature, so calls of it are checked and hovered as a local class's are. Tree
 * mode, a lone file's context and the language server's workspace index each keep one set. */
#ifndef P2S_EXTERNALS_H
#define P2S_EXTERNALS_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "nameset.h"
#include "signature.h"

/* What a name missed in the external set was looked up for (bits: a module's misses map each
 * name to those it was missed for): only a base's or a call's lookup needs the module's tree to
 * be done again; an export's is a re-export, which resolution can add from its name alone. */
typedef enum {
    P2S_MISS_BASE = 1,      /* a class's base, or anything looked up before the calls */
    P2S_MISS_SITE = 2,      /* the object of an `.apply` */
    P2S_MISS_EXPORT = 4,    /* a module-level name */
} P2sMissWhere;

typedef struct {
    bool as_written;              /* left as written where it is defined */
    P2sSignature *signature;      /* its forward's (owned); NULL when not known there */
} P2sExternal;

typedef struct {
    P2sNameSet index;             /* qualified name -> position in classes */
    Array(P2sExternal) classes;
} P2sExternals;

void p2s_externals_init(P2sExternals *self);
/* Adds q with a copy of signature (may be NULL); true when q was not there yet. An existing
 * entry keeps what it has. */
bool p2s_externals_add(P2sExternals *self, const char *q, size_t len, const P2sSignature *signature);
/* Gives q, when it is there without a signature, a copy of signature (not NULL); true when it
 * did (a re-export added before its target was). */
bool p2s_externals_fill_signature(P2sExternals *self, const char *q, size_t len, const P2sSignature *signature);
/* The entry of q, or NULL. */
const P2sExternal *p2s_externals_get(const P2sExternals *self, const char *q, size_t len);
/* Marks q left as written (adding it); true when it was not marked yet. */
bool p2s_externals_mark_as_written(P2sExternals *self, const char *q);
void p2s_externals_release(P2sExternals *self);

#endif
