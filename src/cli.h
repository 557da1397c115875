/* cli.h — the command line: options, usage text, exit codes (docs/DESIGN.md's CLI contract). */
#ifndef P2S_CLI_H
#define P2S_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "report.h"
#include "settings.h"
#include "strbuf.h"

enum {
    P2S_EXIT_OK = 0,
    P2S_EXIT_INPUT = 1,        /* the input has errors (contract errors: output still made), or
                                  --check found stale output */
    P2S_EXIT_USAGE = 2,        /* usage, configuration or rules-file error */
    P2S_EXIT_IO = 3,           /* cannot read input or write output */
    P2S_EXIT_INTERNAL = 4,     /* output failed verification, out of memory */
    P2S_EXIT_NOT_RUN = 127,    /* run: the Python interpreter cannot be executed */
    P2S_EXIT_INTERRUPTED = 130,
};

typedef enum { P2S_COLOR_AUTO, P2S_COLOR_ALWAYS, P2S_COLOR_NEVER } P2sColor;

typedef struct {
    P2sStringList inputs;       /* several only when nothing is written to -o (lint, check...) */
    const char *input;          /* the one being run: a file, a directory (tree mode), or "-" */
    const char *output;         /* NULL or "-": stdout; a directory in tree mode */
    bool in_place;
    const char *stdin_filename;
    P2sFormat format;
    P2sColor color;
    bool quiet;
    bool parse_only;
    bool check;                 /* compare with what is there; write nothing */
    bool diff;                  /* print what would change; write nothing */
    bool lint;                  /* diagnostics only, on stdout */
    bool list;                  /* PyLayer classes and apply sites, on stdout */
    P2sSettings settings;       /* --rules, --select, --ignore, --warn, --config, --no-config */
    P2sStringList excludes;     /* tree mode: globs */
    unsigned jobs;              /* tree mode; 0: not given */
    const char *depfile;
    bool help, version;
} P2sOptions;

/* Parses argv. Returns 0, or -1 with a one-line reason in err (a usage error). */
int  p2s_cli_parse(int argc, char **argv, P2sOptions *out, P2sStrbuf *err);
/* Checks what the options mean together once the input's kind (file or directory) is known. */
int  p2s_cli_validate(const P2sOptions *opts, bool tree_mode, P2sStrbuf *err);
void p2s_cli_usage(P2sStrbuf *out);
void p2s_cli_release(P2sOptions *opts);

#endif
