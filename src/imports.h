/* imports.h — which modules a source imports, read from its bytes without parsing them, and an
 * order of a tree's modules in which each comes after those it imports. Tree mode finds
 * modules in that order, so that most are found once the modules they read names of are, and
 * finished right away (tree.c). The scan is a guess, never a fact the output rests on: a
 * statement it misreads, or one it takes for an import (a docstring's line beginning with
 * "from"), only costs time there, because resolution still checks every module's misses. */
#ifndef P2S_IMPORTS_H
#define P2S_IMPORTS_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"

typedef Array(size_t) P2sIndices;

/* Appends to out the absolute dotted names the `import` and `from ... import` statements of
 * bytes[0..len) read: `import a.b` a.b, `from M import x, y` M.x and M.y (a submodule, or a
 * name of M: the caller takes the longest prefix that is a module), `from M import *` M.
 * Statements begin a line (after
 * indentation) or follow another import statement's `;`; lines continue after a backslash and
 * inside `from`'s parentheses. Relative imports are made absolute from module (its dotted name) and
 * is_package (whether it is a package's __init__); those that climb above its top package are
 * left out. */
void p2s_imports_scan(const char *bytes, size_t len, const char *module, bool is_package, P2sStrings *out);

/* Fills order[0..n) with the nodes 0..n-1 so that each comes after the nodes imports[i] lists
 * (indices of nodes, each below n), as far as cycles allow: a depth-first walk from each node
 * in the order roots[0..n) gives (a permutation of 0..n-1), placing a node once every node it
 * imports is placed or is on the walk's path (in an import cycle, the node the walk reached
 * last comes first). */
void p2s_imports_order(size_t n, const size_t *roots, const P2sIndices *imports, size_t *order);

#endif
