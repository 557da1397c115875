/* main.c — the program: options, rules, one input through the pipeline, diagnostics, output. */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "cli.h"
#include "diag_json.h"
#include "diag_text.h"
#include "io.h"
#include "output.h"
#include "parse.h"
#include "rules.h"
#include "transpile.h"
#include "version.h"

#ifndef P2S_GRAMMAR_VERSION
#error "P2S_GRAMMAR_VERSION must be defined by the build"
#endif

static void main__on_signal(int sig)
{
    (void)sig;
    p2s_cleanup_run();
    _exit(P2S_EXIT_INTERRUPTED);
}

static void main__install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = main__on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);  /* a closed stdout is a write error (exit 3), not a silent death */
}

static void main__print(FILE *stream, const char *text, size_t len)
{
    fwrite(text, 1, len, stream);
    fflush(stream);
}

static void main__message(const char *fmt, const char *arg)
{
    fprintf(stderr, "pylayer2static: error: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}

static bool main__use_color(const P2sOptions *opts)
{
    if (opts->color != P2S_COLOR_AUTO)
        return opts->color == P2S_COLOR_ALWAYS;
    const char *term = getenv("TERM");
    return isatty(STDERR_FILENO) && !getenv("NO_COLOR") && term && strcmp(term, "dumb") != 0;
}

/* Prints the sink; src is NULL when the input could not be read. */
static void main__report(const P2sOptions *opts, const char *name, const P2sSource *src,
                         const P2sDiagSink *sink)
{
    if (opts->format == P2S_FORMAT_JSON) {
        cJSON *array = cJSON_CreateArray();
        for (size_t i = 0; i < sink->items.size; i++)
            p2s_diag_json_add(array, name, src, &sink->items.contents[i]);
        char *text = cJSON_Print(array);
        fprintf(stderr, "%s\n", text);
        p2s_free(text);
        cJSON_Delete(array);
        return;
    }
    bool color = main__use_color(opts);
    P2sStrbuf out;
    p2s_strbuf_init(&out);
    for (size_t i = 0; i < sink->items.size; i++) {
        const P2sDiag *d = &sink->items.contents[i];
        if (opts->quiet && d->severity != P2S_ERROR)
            continue;
        if (src)
            p2s_diag_text_format(src, d, color, &out);
        else
            p2s_diag_text_format_unread(name, d, color, &out);
    }
    main__print(stderr, out.buf, out.len);
    p2s_strbuf_release(&out);
}

static void main__version(const P2sRules *rules)
{
    printf("pylayer2static %s\n", P2S_VERSION);
    printf("grammar: tree-sitter-python %s (language ABI %u)\n", P2S_GRAMMAR_VERSION,
           ts_language_version(tree_sitter_python()));
    printf("rules: paddle.json version %s\n", rules->version ? rules->version : "?");
    printf("runtime: needs pylayer2static_runtime %s\n", P2S_VERSION);
}

static bool main__same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int main__load_rules(const P2sOptions *opts, P2sRules *rules)
{
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    int rc = 0;
    if (p2s_rules_load_default(rules, &err) < 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < opts->rules_count; i++)
        if (p2s_rules_load_file(rules, opts->rules_files[i], &err) < 0)
            rc = -1;
    if (rc < 0)
        fprintf(stderr, "%s\n", err.buf);
    p2s_strbuf_release(&err);
    return rc;
}

static int main__run(const P2sOptions *opts, const P2sRules *rules)
{
    bool from_stdin = strcmp(opts->input, "-") == 0;
    const char *name = from_stdin ? (opts->stdin_filename ? opts->stdin_filename : "<stdin>") : opts->input;
    const char *dest = opts->in_place ? opts->input : opts->output;
    bool to_stdout = !dest || strcmp(dest, "-") == 0;
    P2sSource src = {0};
    P2sDiagSink sink;
    P2sStrbuf out, err;
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&out);
    p2s_strbuf_init(&err);
    int code = P2S_EXIT_OK;
    bool changed = false;

    if (!opts->in_place && !to_stdout && !from_stdin && main__same_file(opts->input, dest)) {
        main__message("output '%s' is the input; use --in-place to rewrite it", dest);
        code = P2S_EXIT_USAGE;
        goto done;
    }
    int read = from_stdin ? p2s_source_read_fd(&src, STDIN_FILENO, name, P2S_SOURCE_LIMIT, &sink)
                          : p2s_source_read_path(&src, opts->input, name, P2S_SOURCE_LIMIT, &sink);
    if (read < 0) {
        main__report(opts, name, NULL, &sink);
        code = P2S_EXIT_IO;
        goto done;
    }
    P2sTranspileStatus status = p2s_transpile(&src, rules,
                                              opts->parse_only ? P2S_MODE_PARSE_ONLY : P2S_MODE_TRANSPILE,
                                              &sink, &out, &changed);
    main__report(opts, name, &src, &sink);
    if (status == P2S_TRANSPILE_INPUT_ERROR) {
        code = P2S_EXIT_INPUT;
        goto done;
    }
    if (status == P2S_TRANSPILE_INTERNAL_ERROR) {
        code = P2S_EXIT_INTERNAL;
        goto done;
    }
    int wrote;
    if (to_stdout)
        wrote = p2s_output_write_fd(STDOUT_FILENO, "standard output", out.buf, out.len, &err);
    else if (opts->in_place && !changed)
        wrote = 0;  /* nothing to rewrite: the file keeps its bytes and its mtime */
    else
        wrote = p2s_output_write_file(dest, out.buf, out.len, &err);
    if (wrote < 0) {
        main__message("%s", err.buf);
        code = P2S_EXIT_IO;
    }
done:
    p2s_source_release(&src);
    p2s_diag_sink_release(&sink);
    p2s_strbuf_release(&out);
    p2s_strbuf_release(&err);
    return code;
}

int main(int argc, char **argv)
{
    P2sOptions opts;
    P2sRules rules = {0};
    P2sStrbuf err;
    int code = P2S_EXIT_OK;

    p2s_alloc_init();
    main__install_signals();
    const char *faults = getenv("P2S_FAULT");
    if (faults && p2s_io_faults_parse(faults) < 0) {
        main__message("malformed P2S_FAULT '%s'", faults);
        return P2S_EXIT_USAGE;
    }
    p2s_strbuf_init(&err);
    if (p2s_cli_parse(argc, argv, &opts, &err) < 0) {
        fprintf(stderr, "pylayer2static: error: %s\nTry 'pylayer2static --help' for more information.\n", err.buf);
        code = P2S_EXIT_USAGE;
        goto done;
    }
    if (opts.help) {
        P2sStrbuf usage;
        p2s_strbuf_init(&usage);
        p2s_cli_usage(&usage);
        main__print(stdout, usage.buf, usage.len);
        p2s_strbuf_release(&usage);
        goto done;
    }
    if (main__load_rules(&opts, &rules) < 0) {
        code = P2S_EXIT_USAGE;
        goto done;
    }
    if (opts.version) {
        main__version(&rules);
        goto done;
    }
    code = main__run(&opts, &rules);
done:
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
    if (fflush(stdout) != 0 && code == P2S_EXIT_OK)
        code = P2S_EXIT_IO;
    return code;
}
