/* lsp_workspace.h — what the language server knows across files: every module below a
 * workspace folder is read, parsed and found the way tree mode does it (p2s_unit_parse,
 * p2s_unit_find with the module's dotted name and the set of PyLayers other modules export,
 * then found again until that set stops growing; modules that define PyLayers finished as
 * `--lint` does, and exports left as written marked in the set: resolve.c's rounds), so a
 * document that imports a PyLayer from a sibling module is checked and resolved as
 * `pylayer2static SRC_DIR -o OUT` would. Trees are dropped after finding: the index keeps per
 * module only what resolution reads of it, and a hover summary of each PyLayer class. Open
 * documents may stand in for their files (an overlay). The workspace owns everything in it. */
#ifndef P2S_LSP_WORKSPACE_H
#define P2S_LSP_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "config.h"
#include "externals.h"
#include "find.h"
#include "nameset.h"
#include "project.h"
#include "rules.h"

#define P2S_WS_MAX_FILES 20000              /* modules indexed per folder; the rest skipped */
#define P2S_WS_MAX_FILE ((size_t)4 << 20)    /* larger files are skipped */

typedef struct {
    char *path;                 /* absolute */
    char *module;               /* dotted name */
    bool is_package;
    P2sStrings exports;         /* module-level PyLayer names (own and re-exported) */
    P2sStrings export_targets;  /* per export: what it re-exports (qualified), or "" */
    P2sSignatures export_signatures;  /* per export: its forward's signature, or NULL */
    P2sNameSet misses;
    P2sStrings export_miss_names;    /* module-level names that missed, and what (find.h) */
    P2sStrings export_miss_targets;
    P2sStrings used;            /* other modules' PyLayers it uses (qualified) */
    P2sStrings as_written;      /* its exports left as written (qualified; resolve.h) */
} P2sWsModule;

typedef struct {
    char *root;                 /* absolute, without a trailing slash */
    char *package_prefix;       /* packages above root, as tree mode names them */
    P2sProject project;         /* import roots: modules below one are named from it */
    P2sStrings excludes;        /* the folder's configured `exclude`, as tree mode applies it */
    Array(P2sWsModule) modules; /* in path order */
    P2sExternals external;      /* every exported PyLayer, with its forward's signature */
    P2sNameSet summary_of;      /* qualified class name -> index in summaries */
    P2sStrings summaries;       /* hover text (Markdown) of each PyLayer class */
    size_t skipped;             /* files left out by the limits */
    bool scanned;
} P2sWorkspace;

/* The text of an open document standing in for path, or NULL to read the file. */
typedef const char *(*P2sWsOverlay)(void *ctx, const char *path, size_t *len);

/* A folder at root, with the configuration the server's settings give it (settings.h: the
 * client's `config`, none for `noConfig`, else the nearest one; empty when broken). */
void p2s_workspace_init(P2sWorkspace *self, const char *root, const P2sConfig *config);
/* Takes the import roots and the excludes from config anew (the client's settings changed). */
void p2s_workspace_configure(P2sWorkspace *self, const P2sConfig *config);
/* (Re)indexes every module below root with rules. */
void p2s_workspace_scan(P2sWorkspace *self, const P2sRules *rules, P2sWsOverlay overlay, void *ctx);
/* Whether path lies below root. */
bool p2s_workspace_contains(const P2sWorkspace *self, const char *path);
/* The module name of a .py path below root (caller frees), or NULL. */
char *p2s_workspace_module_name(const P2sWorkspace *self, const char *path, bool *is_package);
/* The indexed module of path, or NULL. */
P2sWsModule *p2s_workspace_module(P2sWorkspace *self, const char *path);
/* Whether m (NULL: not indexed) exports what found does: the same names, with the same forward
 * signatures, the same of them left as written. */
bool p2s_workspace_exports_current(const P2sWsModule *m, const P2sFindings *found);
/* The hover summary of a PyLayer by qualified name, a re-export's that of the class it names
 * (followed through the modules' export targets); NULL when no module defines it. */
const char *p2s_workspace_summary(const P2sWorkspace *self, const char *qualname);
void p2s_workspace_release(P2sWorkspace *self);

#endif
