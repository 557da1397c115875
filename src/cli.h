/* cli.h — the command line: options, usage text, exit codes (DESIGN.md's CLI contract). */
#ifndef P2S_CLI_H
#define P2S_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

enum {
    P2S_EXIT_OK = 0,
    P2S_EXIT_INPUT = 1,        /* the input has errors */
    P2S_EXIT_USAGE = 2,        /* usage, configuration or rules-file error */
    P2S_EXIT_IO = 3,           /* cannot read input or write output */
    P2S_EXIT_INTERNAL = 4,     /* output failed verification, out of memory */
    P2S_EXIT_INTERRUPTED = 130,
};

typedef enum { P2S_FORMAT_TEXT, P2S_FORMAT_JSON } P2sFormat;
typedef enum { P2S_COLOR_AUTO, P2S_COLOR_ALWAYS, P2S_COLOR_NEVER } P2sColor;

#define P2S_MAX_RULES_FILES 16

typedef struct {
    const char *input;          /* a path, or "-" for stdin */
    const char *output;         /* NULL or "-": stdout */
    bool in_place;
    const char *stdin_filename;
    P2sFormat format;
    P2sColor color;
    bool quiet;
    bool parse_only;
    const char *rules_files[P2S_MAX_RULES_FILES];
    size_t rules_count;
    bool help, version;
} P2sOptions;

/* Parses argv. Returns 0, or -1 with a one-line reason in err (a usage error). */
int  p2s_cli_parse(int argc, char **argv, P2sOptions *out, P2sStrbuf *err);
void p2s_cli_usage(P2sStrbuf *out);

#endif
