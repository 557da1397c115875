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

#endif
