/* resolve.h — resolution across modules, the one way tree mode, a lone file's context and the
 * language server's workspace index run it: every module's exports (own PyLayers and
 * re-exported ones, including re-exports of names that just appeared) join the external set,
 * each with its forward's signature (a re-export's is its target's); a module that missed one
 * of the names that just appeared where that matters (refind_for) is found again; repeat until
 * the set stops growing. Then, once modules are checked, leaving as written across modules:
 * exports left as written are marked in the set, and the modules that use a newly marked one
 * are checked again, until no more are marked. The caller owns the modules and how they are
 * found and checked; the resolver owns the rounds. */
#ifndef P2S_RESOLVE_H
#define P2S_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "externals.h"
#include "find.h"
#include "nameset.h"
#include "signature.h"
#include "strbuf.h"

/* What resolution reads of one module's findings; borrowed from the caller, who keeps them
 * (a found unit's, or what it kept after dropping the tree). */
typedef struct {
    const char *module;                     /* dotted name; "" for a top-level script */
    const P2sStrings *exports;              /* module-level PyLayer names, own and re-exported */
    const P2sStrings *export_targets;       /* per export: the qualified name it re-exports, or "" */
    const P2sSignatures *export_signatures; /* per export: its forward's signature, or NULL */
    const P2sNameSet *misses;               /* qualified names it looked up that were no PyLayer,
                                               each mapped to P2sMissWhere bits */
    unsigned refind_for;                    /* the P2sMissWhere bits of the misses worth finding
                                               it again for; 0: every miss */
    const P2sStrings *export_miss_names;    /* may be NULL: module-level names that missed (find.h) */
    const P2sStrings *export_miss_targets;  /* per name: what it missed; once that is in the set,
                                               `module.name` joins it as a re-export, found again
                                               or not */
    const P2sStrings *as_written;           /* may be NULL: its exports left as written, by
                                               qualified name (p2s_resolve_as_written_exports) */
    const P2sStrings *uses;                 /* may be NULL: the other modules' PyLayers it uses
                                               (qualified), when it is to be checked again for
                                               one of them newly left as written */
} P2sModuleFacts;

/* The facts of module i as it stands now; false when it has none (unread, unparsable): it then
 * neither exports nor is found again. */
typedef bool (*P2sResolveFacts)(void *ctx, size_t i, P2sModuleFacts *out);
/* Finds modules indices[0..n) (ascending) again, now that the external set holds more; it may
 * only read the set. */
typedef void (*P2sResolveRefind)(void *ctx, const size_t *indices, size_t n);

/* Runs the rounds over modules [0, count) until the external set stops growing. */
void p2s_resolve_exports(P2sExternals *external, size_t count, P2sResolveFacts facts, P2sResolveRefind refind,
                         void *ctx);
/* Adds one module's exports to the set as a round does, without finding anything again: for a
 * caller that fills a set module by module as they are found, each after the modules it
 * imports (tree mode). Such a set must not be the rounds': a name already in the set is not
 * new to them, so the modules that missed it would not be found again. */
void p2s_resolve_add_exports(P2sExternals *external, const P2sModuleFacts *m);
/* Leaves as written across modules, after every module is checked (its facts' as_written
 * filled): marks each module's exports left as written in the set, and re-exports of marked
 * names, until nothing changes; then the modules that use a newly marked name (their facts'
 * uses) are found and checked again through redo (their calls of it stay as written, their
 * subclasses of it are left as written, so their own exports may be marked next); repeat until
 * no name is newly marked. redo may only read the set. */
void p2s_resolve_as_written(P2sExternals *external, size_t count, P2sResolveFacts facts, P2sResolveRefind redo,
                            void *ctx);
/* Appends the qualified names of module's exports that name one of its classes left as written
 * (found as check leaves it). */
void p2s_resolve_as_written_exports(const char *module, const P2sFindings *found, P2sStrings *out);
/* Appends `module.name` (just name for the module ""): an export's qualified name. */
void p2s_resolve_qualify(P2sStrbuf *out, const char *module, const char *name);

#endif
