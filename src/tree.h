/* tree.h — tree mode: SRC_DIR -o OUT_DIR. Walks the tree (.gitignore and --exclude respected,
 * symlinked directories not followed), transpiles every .py with cross-module resolution, copies
 * other files, writes only outputs that change, on -j worker threads with output identical to
 * -j1, and optionally a depfile. */
#ifndef P2S_TREE_H
#define P2S_TREE_H

#include "cli.h"
#include "report.h"
#include "rules.h"

/* Returns the exit code (cli.h). Diagnostics of every file go to report, in path order. */
int p2s_tree_run(const P2sOptions *opts, const P2sRules *rules, P2sReport *report);

/* Dotted packages above src_root (a root that is itself a package keeps its name); "" when
 * none. Caller frees. Shared with the language server's workspace index (lsp_workspace.c). */
char *p2s_tree_package_prefix(const char *src_root);
/* The module name of rel (a .py path below the root): `pkg/ops.py` -> prefix.pkg.ops; a
 * package's __init__.py names the package (*is_package). Caller frees. */
char *p2s_tree_module_name(const char *package_prefix, const char *rel, bool *is_package);

#endif
