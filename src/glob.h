/* glob.h — path patterns: `*` and `?` within one path component, `[...]` classes, `**` across
 * components (gitignore and --exclude semantics), and .gitignore files. */
#ifndef P2S_GLOB_H
#define P2S_GLOB_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"

bool p2s_glob_match(const char *pattern, const char *path);

typedef struct {
    char *base;         /* directory of the .gitignore, relative to the tree root ("" at the root) */
    char *pattern;      /* without '!' and trailing '/' */
    bool negate, dir_only, anchored;
} P2sIgnoreRule;

typedef Array(P2sIgnoreRule) P2sIgnoreRules;

/* Adds the rules of one .gitignore (text) found in directory base. */
void p2s_ignore_add(P2sIgnoreRules *rules, const char *base, const char *text, size_t len);
/* Whether rel (relative to the root) is ignored; the last matching rule wins. */
bool p2s_ignore_match(const P2sIgnoreRules *rules, const char *rel, bool is_dir);
/* Drops the rules added after the first `size` (leaving the directory that added them). */
void p2s_ignore_truncate(P2sIgnoreRules *rules, size_t size);
void p2s_ignore_release(P2sIgnoreRules *rules);

#endif
