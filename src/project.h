/* project.h — where a file sits in the user's project, found as ruff finds it: the project root
 * is the directory of the configuration's pyproject.toml (else the nearest pyproject.toml), the
 * import roots are its `src = [...]` (default: the root and root/src). Module names are made
 * here only: tree mode, lone files, standard input and the language server name modules and
 * find sibling modules through it. */
#ifndef P2S_PROJECT_H
#define P2S_PROJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "config.h"

typedef struct {
    char *root;                 /* absolute; NULL when no pyproject.toml is above */
    P2sStrings roots;           /* absolute import roots that exist, deepest first */
} P2sProject;

/* Finds the project of start_dir; config may be NULL (or hold no file). */
void  p2s_project_init(P2sProject *self, const char *start_dir, const P2sConfig *config);
/* The dotted module name of path (absolute, .py) below the deepest import root other than the
 * project root that holds it; NULL when none does (the caller names it by its packages, as a
 * lone tree does). Caller frees. */
char *p2s_project_module_name(const P2sProject *self, const char *path, bool *is_package);
/* The one rule that names a module found below a source root (tree mode's walk, the language
 * server's workspace index): below an import root of the project other than its root, from that
 * root (`src/pkg/ops.py` is pkg.ops); else package_prefix (p2s_project_package_prefix of the
 * source root) and rel, a .py path below the root (`pkg/ops.py` is PREFIX.pkg.ops; a package's
 * __init__.py names the package: *is_package). self and abs_root (the root resolved) may be
 * NULL: no import root then. Caller frees. */
char *p2s_project_name_file(const P2sProject *self, const char *abs_root, const char *package_prefix,
                            const char *rel, bool *is_package);
/* Dotted packages above dir (a dir that is itself a package keeps its name, so `import
 * pkg.ops` inside pkg/ resolves); "" when none. Caller frees. */
char *p2s_project_package_prefix(const char *dir);
/* The module name of a file named by its packages (`__init__.py` upward), and the directory
 * above its topmost package (*crawl_root, absolute, NULL when path's directory cannot be
 * resolved). Caller frees both. */
char *p2s_project_crawl_module_name(const char *path, char **crawl_root, bool *is_package);
/* The file of module name[0..len): `a/b.py` or `a/b/__init__.py` below first_root (may be NULL)
 * or an import root, in that order; NULL when none is a regular file. Caller frees. */
char *p2s_project_locate(const P2sProject *self, const char *first_root, const char *name, size_t len,
                         bool *is_package);
/* path with its directory resolved (the file itself may be a link, or absent: standard input's
 * name); NULL when the directory does not resolve. Caller frees. */
char *p2s_project_absolute(const char *path);
void  p2s_project_release(P2sProject *self);

#endif
