/* tree.h — tree mode: SRC_DIR -o OUT_DIR. Walks the tree (walk.h: .gitignore and --exclude
 * respected, symlinked directories not followed), transpiles every .py with cross-module
 * resolution, copies other files, writes only outputs that change, on -j worker threads with
 * output identical to -j1, and optionally a depfile (the delivery: tree_deliver.c). Its state
 * and phases over a set of modules are also a lone file's context's (tree_context.h), which
 * runs them over the modules the file reaches. */
#ifndef P2S_TREE_H
#define P2S_TREE_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <tree_sitter/api.h>

#include "cli.h"
#include "externals.h"
#include "imports.h"
#include "nameset.h"
#include "output.h"
#include "project.h"
#include "report.h"
#include "rules.h"
#include "source.h"
#include "transpile.h"

/* Returns the exit code (cli.h). Diagnostics of every file go to report, in path order.
 * project (may be NULL) names the modules below its import roots. */
int p2s_tree_run(const P2sOptions *opts, const P2sRules *rules, const P2sProject *project, P2sReport *report);

/* One module (or other file) of a run, and the run: tree mode's, or a lone file's context's. */
typedef struct {
    char *rel;                  /* path below the source root */
    off_t size;                 /* as the walk saw it: the workers take big files first */
    bool python;
    bool read_ok;
    P2sSource src;
    P2sUnit unit;
    P2sTranspileStatus status;
    char *module;
    bool is_package;
    P2sModuleRead read;         /* a lone file's run: the file, or a module it reached */
    TSTree *parsed;             /* a lone file's run: the file's tree, given (not parsed again) */
    bool parked;                /* tree dropped: kept are the misses and exports below */
    bool rewrites;              /* has PyLayers or apply sites, or uses Paddle's PyLayer-backed
                                   APIs (the runtime import): parked only for memory, parsed
                                   again when it is finished */
    bool kept;                  /* its tree counts against the budget */
    bool finished_early;        /* finished when found, in import order: kept are its misses and
                                   exports, which resolution checks (found again if it must be) */
    bool may_hold_pylayers;     /* by the scan, may define, use or re-export PyLayers: it spells a
                                   base's name (`PyLayer`) or imports a module that may */
    P2sStrings imported;        /* tree mode, until ordered: what its import statements name */
    P2sNameSet misses;          /* parked: what resolution still needs of the findings */
    P2sStrings export_miss_names;    /* a lone file's run: a reached module's re-exports of names
                                        not known yet, and what they missed (findings.h) */
    P2sStrings export_miss_targets;
    P2sNameSet exports_read;    /* those names that a module of the run reads: their targets
                                   count as misses (followed, and found again for) */
    P2sStrings exports;         /* parked or finished: the findings' exports and targets */
    P2sStrings export_targets;
    P2sSignatures export_signatures;
    P2sStrings depends;         /* other modules' PyLayers it uses, kept for --depfile */
    P2sStrings as_written;      /* finished: qualified names of its exports left as written */
    P2sDiagSink io;             /* walk and read errors, and non-Python copies */
    P2sOutputBatch written;     /* its temp file, written on a worker, not yet renamed */
} P2sTreeEntry;

typedef struct {
    const P2sOptions *opts;
    const P2sRules *rules;
    char *src_root, *out_root;
    char *package_prefix;       /* dotted packages above the source root; "" when none */
    const P2sProject *project;  /* names modules below its import roots */
    char *abs_root;             /* src_root resolved, for the project's roots; NULL if it does not */
    Array(P2sTreeEntry) entries;
    size_t *by_size;            /* entry indices, biggest file first (path order among equals):
                                   the workers take them so, and no big file is left to one
                                   worker at the end of a phase */
    P2sExternals external;
    unsigned jobs;              /* workers of each phase */
    struct stat out_stat;
    bool out_exists;
    atomic_size_t kept_bytes;   /* source bytes of the modules whose trees are kept */
    bool outputs_unwanted;      /* a lone file's context: modules are finished for their
                                   diagnostics' verdicts (exports left as written) only */
    P2sOutputBatch batch;
    bool input_error, io_error, internal_error, stale;
    /* Tree mode's analysis in import order (tree.c's tree__analyze_in_order); NULL order: by size. */
    size_t *order;              /* entry indices, each after the modules it imports */
    size_t *position;           /* an entry's index in order */
    P2sIndices *imports;        /* per entry: the entries its import statements name */
    P2sNameSet modules;         /* module name -> entry index */
    atomic_uchar *shared;       /* per entry, tree.c's TreeShared */
    pthread_rwlock_t external_lock;   /* finds read the external set while others add to it */
    pthread_mutex_t shared_lock;      /* with shared_changed: waits for modules to be shared */
    pthread_cond_t shared_changed;
} P2sTree;

/* The phases below are exported for tree_context.c, which runs them over the modules a lone
 * file reaches (so both runs find, resolve and finish modules alike). */

/* Zeroes t for a run with these settings, its locks, external set and batch ready; the caller
 * sets the roots. Released with p2s_tree_release. */
void p2s_tree_init(P2sTree *t, const P2sOptions *opts, const P2sRules *rules, const P2sProject *project);
void p2s_tree_release(P2sTree *t);
/* Adds an entry (rel below src_root, or a path when src_root is ""); the array may move. */
P2sTreeEntry *p2s_tree_add_entry(P2sTree *t, const char *rel, bool python, off_t size);
/* each(t, entry) for entries [from, end), on jobs workers (the analysis of a range, and
 * tree_deliver.c's writes); each touches its own entry only. */
void p2s_tree_each_in_range(P2sTree *t, size_t from, size_t end, unsigned jobs,
                            void (*each)(P2sTree *t, P2sTreeEntry *e));
/* Reads, parses and finds entries [from, end) on the workers, with the external set as it stands. */
void p2s_tree_analyze_range(P2sTree *t, size_t from, size_t end);
/* t->by_size: entry indices, biggest file first (what the workers take first). */
void p2s_tree_order_by_size(P2sTree *t);
/* resolve.c's export rounds over every entry, each round's modules found again on the
 * workers; then a parked module's re-exports that the rounds resolved join its exports. */
void p2s_tree_resolve_across_modules(P2sTree *t);
/* Finishes every found entry that rewrites and is not finished yet, on the workers, biggest
 * first (after p2s_tree_order_by_size); a parked one is parsed and found again first. */
void p2s_tree_finish_found(P2sTree *t);
/* resolve.c's rounds of leaving as written across modules, once every entry is finished. */
void p2s_tree_leave_as_written_across_modules(P2sTree *t);

/* Delivery (tree_deliver.c), once tree mode's phases have finished every module. */

/* Window by window: the workers (jobs of them) write each entry's temp file, unless --check or
 * --diff, which compare and print on this thread; then this thread reports the window's files
 * to report in path order, syncs once and renames. Sets t's input_error, internal_error,
 * io_error and stale as its entries warrant. */
void p2s_tree_report_and_deliver(P2sTree *t, P2sReport *report, unsigned jobs);
/* Writes opts->depfile: one make rule per module transpiled without error, its output
 * depending on its source and on the modules its PyLayers come from, transitively. An I/O
 * error is printed and sets t->io_error. */
void p2s_tree_write_depfile(P2sTree *t);

#endif
