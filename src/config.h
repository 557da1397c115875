/* config.h — `[tool.pylayer2static]` in pyproject.toml: rules, select, ignore, warn, exclude, jobs,
 * src, and packages (read by the runtime's import hook only: checked, not kept).
 * The nearest pyproject.toml above the input that has that table is used. Only the TOML this
 * table needs is read: strings, integers and arrays of strings. P2sConfig owns its strings. */
#ifndef P2S_CONFIG_H
#define P2S_CONFIG_H

#include <stdbool.h>

#include "array.h"
#include "strbuf.h"

typedef struct {
    char *path;                 /* the file read; NULL when none */
    P2sStrings rules;           /* rules files, relative paths resolved against the file's directory */
    P2sStrings select, ignore, exclude;
    P2sStrings warn;            /* codes (prefixes) whose errors are reported as warnings */
    P2sStrings src;             /* import roots (ruff's `src`), resolved against the file's directory */
    bool has_src;
    unsigned jobs;              /* 0: not set */
} P2sConfig;

/* The nearest pyproject.toml with a [tool.pylayer2static] table at or above dir; caller frees.
 * NULL when there is none. */
char *p2s_config_discover(const char *dir);
/* The nearest pyproject.toml at or above dir, with or without that table; caller frees. */
char *p2s_config_nearest_pyproject(const char *dir);
/* Reads path. Returns 0, or -1 with `path:line:col: what` in err. */
int  p2s_config_load(const char *path, P2sConfig *out, P2sStrbuf *err);
/* Reads TOML text (for tests); base_dir resolves relative rules paths. Same contract. */
int  p2s_config_parse(const char *name, const char *text, size_t len, const char *base_dir,
                      P2sConfig *out, P2sStrbuf *err);
void p2s_config_release(P2sConfig *self);

#endif
