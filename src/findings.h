/* findings.h — what find makes of one module (find.h): its classes and which are PyLayers,
 * its `.apply` sites, its exports and the names it missed; and where the module sits, which find
 * reads. Types only, so that find's parts (scope.h, find.c) and its readers share them.
 * P2sFindings owns its strings and arrays (p2s_findings_release, find.h); nodes point into the
 * caller's tree, spans into the source. */
#ifndef P2S_FINDINGS_H
#define P2S_FINDINGS_H

#include <stdbool.h>
#include <tree_sitter/api.h>

#include "array.h"
#include "externals.h"
#include "nameset.h"
#include "signature.h"
#include "source.h"

typedef struct {
    TSNode node;              /* class_definition */
    P2sSpan name;
    char *qualname;           /* "Outer.Inner" when reachable from module scope; NULL otherwise */
    bool is_pylayer;
    TSNode forward;           /* function_definition of forward (own or a local base's); null node if none */
    TSNode backward;          /* likewise for backward */
    TSNode forward_stmt;      /* forward's statement in its class body: its decorated_definition,
                                 or forward itself when undecorated */
    TSNode backward_stmt;     /* likewise for backward */
    size_t forward_owner;     /* the class whose body holds forward (this one or a base) */
    size_t backward_owner;    /* likewise for backward */
    bool forward_plain;       /* forward's only decorator is @staticmethod */
    P2sSignature *signature;  /* forward's, read once here (owned); NULL when no forward */
    P2sSignature *backward_signature;  /* backward's, likewise; NULL when no backward */
    size_t forward_outputs;   /* how many values forward returns when every return agrees
                                 (counted by check.c); P2S_COUNT_UNKNOWN otherwise */
    bool builder;             /* gets a generated static builder (see find.c for the conditions) */
    bool as_written;          /* left as written, sites and all: its contract cannot be trusted
                                 (an error of its own or of a base; set by check.c, and by
                                 find.c for a base of another module left as written) */
    P2sSpan as_written_base;  /* that other module's base; empty otherwise */
} P2sPyLayerClass;

#define P2S_COUNT_UNKNOWN SIZE_MAX

/* class_index of a site whose class is not one of this file's. */
#define P2S_SITE_EXTERNAL SIZE_MAX          /* a PyLayer another module of the tree defines */
#define P2S_SITE_DYNAMIC (SIZE_MAX - 1)     /* unresolved: the runtime decides when it runs */

typedef struct {
    TSNode attribute;         /* the `X.apply` attribute node */
    TSNode call;              /* the call when `X.apply(...)`; null node when taken as a value */
    size_t class_index;       /* a class of this file, or P2S_SITE_EXTERNAL / P2S_SITE_DYNAMIC */
    const P2sSignature *signature;  /* forward's of the class it calls: the class's, or for an
                                       external one a copy the findings own; NULL if unknown */
    size_t external;          /* for P2S_SITE_EXTERNAL: the class's qualified name, as its
                                 index in the findings' externals_used */
    bool as_written;          /* not rewritten: an error here, a class left as written, or
                                 unresolved where such a class may reach it (set by check.c) */
} P2sApplySite;

/* What a run reads of a module's findings: which names it missed are worth reading other
 * modules for (P2sFindings.misses). */
typedef enum {
    P2S_READ_ALL,       /* rewritten, and other modules import it (a tree, the language server) */
    P2S_READ_SITES,     /* the lone file being rewritten: nothing reads its exports */
    P2S_READ_EXPORTS,   /* a module a lone file reached: only its exports are read (its
                           re-exports' misses go to export_miss_* only) */
} P2sModuleRead;

/* Where a file sits in a source tree: for relative imports, and for PyLayers that other
 * modules define (tree mode). */
typedef struct {
    const char *name;                 /* dotted module name; a package's __init__ is the package */
    bool is_package;
    const P2sExternals *external;     /* PyLayer classes of other modules; may be NULL */
    P2sModuleRead read;
} P2sModule;

typedef enum {
    P2S_IMPORT_JOIN_AFTER,    /* `<stmt>; import ...` */
    P2S_IMPORT_JOIN_BEFORE,   /* `import ...; <stmt>` */
    P2S_IMPORT_OWN_LINE,      /* a line of its own before a compound statement: lines shift */
} P2sImportPlacement;

typedef struct {
    Array(P2sPyLayerClass) classes;   /* every class of the file; is_pylayer marks PyLayers */
    Array(P2sApplySite) sites;        /* in source order */
    size_t pylayer_count;
    P2sStrings exports;               /* module-level names that are PyLayer classes here */
    Array(size_t) export_classes;     /* per export: the class of this file it names, or SIZE_MAX */
    P2sSignatures export_signatures;  /* per export: a copy of that class's forward
                                         signature (owned), NULL for a re-export or none */
    P2sStrings export_targets;        /* per export: the other module's PyLayer it re-exports
                                         (qualified), or "" for a class of this file */
    P2sStrings externals_used;        /* qualified names of other modules' PyLayers this one uses */
    P2sSignatures external_signatures;  /* owned copies the external sites point to */
    P2sNameSet misses;                /* tree mode: qualified names looked up as other modules'
                                         PyLayers and not found (yet), where the module's
                                         P2sModuleRead needs them; each maps to what it was
                                         looked up for (P2sMissWhere bits) */
    P2sStrings export_miss_names;     /* module-level names whose lookup missed (a re-export of
                                         a name not known yet), but for P2S_READ_SITES; for
                                         P2S_READ_EXPORTS not in misses: a lone file's run
                                         follows one only when a module reads that name of this
                                         one (tree.c) */
    P2sStrings export_miss_targets;   /* per such name: the qualified name it missed */
    bool already_transpiled;          /* the file ends with this tool's marker */
    bool uses_paddle_api;             /* imports one of Paddle's PyLayer-backed APIs (the rules'
                                         paddle_pylayer_apis) or spells one through a module it
                                         imports: it needs the runtime import, whose patches
                                         make them static, even with no PyLayer of its own */
    bool has_runtime_import;          /* the runtime import is one of the module's leading
                                         imports already (a run that only added it): it is not
                                         added again */
    size_t runtime_import_at;         /* byte offset where the runtime import goes */
    P2sImportPlacement runtime_import;
} P2sFindings;

static inline bool p2s_node_present(TSNode node)
{
    return !ts_node_is_null(node);
}

#endif
