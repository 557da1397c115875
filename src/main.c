/* main.c — the program: options, configuration, rules, then one file or a tree through the
 * pipeline, diagnostics, and what becomes of the result. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "cli.h"
#include "config.h"
#include "deliver.h"
#include "io.h"
#include "lsp.h"
#include "parse.h"
#include "project.h"
#include "report.h"
#include "rules.h"
#include "settings.h"
#include "transpile.h"
#include "tree.h"
#include "tree_context.h"
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
    int fd = opts->lint ? STDOUT_FILENO : STDERR_FILENO;
    return isatty(fd) && !getenv("NO_COLOR") && term && strcmp(term, "dumb") != 0;
}

static void main__version(const P2sRules *rules)
{
    printf("pylayer2static %s\n", P2S_VERSION);
    printf("grammar: tree-sitter-python %s (language ABI %u)\n", P2S_GRAMMAR_VERSION,
           ts_language_version(tree_sitter_python()));
    printf("rules: paddle.json version %s\n", rules->version ? rules->version : "?");
    printf("runtime: needs pylayer2static_runtime %s\n", P2S_VERSION);
}

/* `pylayer2static run ARGS...`: the Python runner (pylayer2static_runtime.run) takes over this
 * process, told through P2S_BIN which binary transpiles for it, so the runner and the binary
 * that started it never disagree on version. Returns only when the interpreter cannot be run. */
static int main__run_python(int argc, char **argv)
{
    int code = P2S_EXIT_NOT_RUN;
    char **args = NULL;
    const char *python = getenv("P2S_PYTHON");
    if (!python || !*python)
        python = "python3";
    char *self = realpath("/proc/self/exe", NULL);
    if (!self || setenv("P2S_BIN", self, 1) != 0) {
        fprintf(stderr, "pylayer2static: error: run: cannot find this program's path: %s\n", strerror(errno));
        code = P2S_EXIT_IO;
        goto done;
    }
    args = p2s_calloc((size_t)argc + 3, sizeof(char *));
    args[0] = (char *)python;
    args[1] = "-m";
    args[2] = "pylayer2static_runtime.run";
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    execvp(python, args);
    fprintf(stderr, "pylayer2static: error: run: cannot run '%s': %s\n", python, strerror(errno));
done:
    free(self);  /* from realpath */
    p2s_free(args);
    return code;
}

static bool main__same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool main__is_dir(const char *input)
{
    struct stat st;
    return input && strcmp(input, "-") != 0 && stat(input, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The exit code of several inputs: the most serious one. */
static int main__worse(int a, int b)
{
    static const int order[] = {P2S_EXIT_OK, P2S_EXIT_INPUT, P2S_EXIT_USAGE, P2S_EXIT_IO, P2S_EXIT_INTERNAL};
    int rank_a = 0, rank_b = 0;
    for (int i = 0; i < 5; i++) {
        if (order[i] == a)
            rank_a = i;
        if (order[i] == b)
            rank_b = i;
    }
    return rank_b > rank_a ? b : a;
}

/* Where configuration is looked for: the input's directory (the cwd for stdin). */
static char *main__config_start(const P2sOptions *opts, bool tree_mode)
{
    if (strcmp(opts->input, "-") == 0)
        return p2s_strdup(".");
    if (tree_mode)
        return p2s_strdup(opts->input);
    const char *slash = strrchr(opts->input, '/');
    return slash ? p2s_strndup(opts->input, (size_t)(slash - opts->input) + (slash == opts->input)) : p2s_strdup(".");
}

static int main__run_file(const P2sOptions *opts, const P2sRules *rules, const P2sProject *project,
                          P2sReport *report)
{
    bool from_stdin = strcmp(opts->input, "-") == 0;
    const char *name = from_stdin ? (opts->stdin_filename ? opts->stdin_filename : "<stdin>") : opts->input;
    const char *dest = opts->in_place ? opts->input : opts->output;
    P2sSource src = {0};
    P2sUnit unit;
    P2sDiagSink io;
    P2sStrbuf err;
    P2sTreeContext context = {0};
    p2s_diag_sink_init(&io);
    p2s_strbuf_init(&err);
    p2s_unit_init(&unit, &src);
    unit.regenerate = true;
    int code = P2S_EXIT_OK;

    struct stat st;
    if (opts->in_place && (stat(opts->input, &st) != 0 || !S_ISREG(st.st_mode))) {
        main__message("--in-place needs a regular file; '%s' is not one", opts->input);
        code = P2S_EXIT_USAGE;
        goto done;
    }
    if (!opts->in_place && dest && strcmp(dest, "-") != 0 && !from_stdin && main__same_file(opts->input, dest)) {
        main__message("output '%s' is the input; use --in-place to rewrite it", dest);
        code = P2S_EXIT_USAGE;
        goto done;
    }
    int read = from_stdin ? p2s_source_read_fd(&src, STDIN_FILENO, name, P2S_SOURCE_LIMIT, &io)
                          : p2s_source_read_path(&src, opts->input, name, P2S_SOURCE_LIMIT, &io);
    if (read < 0) {
        p2s_report_file(report, name, NULL, &io);
        code = P2S_EXIT_IO;
        goto done;
    }
    P2sTranspileStatus status = p2s_unit_parse(&unit);
    if (status == P2S_TRANSPILE_OK && opts->parse_only) {
        p2s_strbuf_add(&unit.out, src.bytes, src.len);
    } else if (status == P2S_TRANSPILE_OK) {
        /* The sibling modules its imports reach are read for resolution and checks; unnamed
         * standard input is nowhere in a project. */
        bool placed = !from_stdin || opts->stdin_filename;
        if (placed)
            p2s_tree_context_place(project, name, &context);
        P2sModule module = {context.module, context.is_package, &context.external, P2S_READ_SITES};
        p2s_unit_find(&unit, rules, placed ? &module : NULL);
        if (placed && p2s_tree_context_reaches(opts, project, &context, &unit.found.misses)) {
            p2s_tree_context(opts, rules, project, name, unit.src, unit.tree, &context);
            p2s_unit_find(&unit, rules, &module);
        }
        unit.drop_tree_when_verified = !opts->list;   /* only --list reads the findings after */
        status = p2s_unit_finish(&unit, rules);
    }
    p2s_report_file(report, name, &src, &unit.sink);
    if (!p2s_transpile_made_output(status)) {
        code = status == P2S_TRANSPILE_INPUT_ERROR ? P2S_EXIT_INPUT : P2S_EXIT_INTERNAL;
        goto done;
    }
    /* Contract errors fail the run, and the output (the rest transpiled) is still delivered. */
    if (status == P2S_TRANSPILE_CONTRACT_ERROR)
        code = P2S_EXIT_INPUT;
    if (opts->list) {
        p2s_deliver_list(name, &unit, stdout);
        goto done;
    }
    if (opts->lint)
        goto done;
    /* Freeing a tree allocates (tree-sitter's release stack): done before the output is
     * committed, so no allocation can fail after it. */
    p2s_unit_drop_tree(&unit);
    switch (p2s_deliver(opts, dest, &src, unit.out.buf, unit.out.len, stdout, NULL, &err)) {
    case P2S_DELIVER_DONE:
        break;
    case P2S_DELIVER_STALE:
        code = P2S_EXIT_INPUT;
        break;
    case P2S_DELIVER_IO_ERROR:
        main__message("%s", err.buf);
        code = P2S_EXIT_IO;
        break;
    }
done:
    p2s_unit_release(&unit);
    p2s_tree_context_release(&context);
    p2s_source_release(&src);
    p2s_diag_sink_release(&io);
    p2s_strbuf_release(&err);
    return code;
}

/* The settings of path's configuration file (NULL: none; settings.h), read the first time it
 * is asked for: each input is run with those of its own project. NULL (the reason printed)
 * when they cannot be read. */
static const P2sFileSettings *main__settings_for(const P2sOptions *opts, P2sSettingsCache *cache, const char *path)
{
    const P2sFileSettings *s;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    int rc = p2s_settings_for(&opts->settings, cache, path, &s, &err);
    if (rc < 0)
        fprintf(stderr, "%s\n", err.buf);
    p2s_strbuf_release(&err);
    return rc < 0 ? NULL : s;
}

/* The configuration file of opts->input: the one of its directory (of the cwd for stdin). */
static char *main__config_path(const P2sOptions *opts)
{
    char *start = main__config_start(opts, main__is_dir(opts->input));
    char *path = p2s_settings_config_path(&opts->settings, start);
    p2s_free(start);
    return path;
}

/* Runs opts->input with the settings and project of its own: its walk's excludes and jobs as
 * settings.c merges the command line's with its configuration's. */
static int main__run_input(const P2sOptions *opts, const P2sFileSettings *settings, P2sReport *report)
{
    P2sWalkSettings walk;
    p2s_settings_walk(&opts->excludes, opts->jobs, &settings->config, &walk);
    P2sOptions run = *opts;
    run.excludes = walk.excludes;
    run.jobs = walk.jobs;
    bool tree_mode = main__is_dir(opts->input);
    char *start = main__config_start(opts, tree_mode);
    P2sProject project;
    p2s_project_init(&project, start, &settings->config);
    p2s_free(start);
    int code = tree_mode ? p2s_tree_run(&run, &settings->rules, &project, report)
                         : main__run_file(&run, &settings->rules, &project, report);
    p2s_project_release(&project);
    array_delete(&walk.excludes);
    return code;
}

int main(int argc, char **argv)
{
    P2sOptions opts;
    P2sSettingsCache settings = {0};
    Array(const P2sFileSettings *) settings_of = {0};  /* per input */
    P2sStrbuf err;
    int code = P2S_EXIT_OK;

    p2s_alloc_init();
    main__install_signals();
    if (argc >= 2 && strcmp(argv[1], "lsp") == 0)  /* the language server: lsp.h */
        return p2s_lsp_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "run") == 0)
        return main__run_python(argc - 1, argv + 1);
    p2s_strbuf_init(&err);
    const char *faults = getenv("P2S_FAULT");
    if (faults && p2s_io_faults_parse(faults) < 0) {
        main__message("malformed P2S_FAULT '%s'", faults);
        return P2S_EXIT_USAGE;
    }
    if (p2s_cli_parse(argc, argv, &opts, &err) < 0)
        goto usage;
    if (opts.help) {
        P2sStrbuf usage;
        p2s_strbuf_init(&usage);
        p2s_cli_usage(&usage);
        fwrite(usage.buf, 1, usage.len, stdout);
        p2s_strbuf_release(&usage);
        goto done;
    }
    /* What the command line says is checked before the configuration adds to it. */
    for (size_t i = 0; i < opts.inputs.size && !opts.version; i++)
        if (p2s_cli_validate(&opts, main__is_dir(opts.inputs.contents[i]), &err) < 0)
            goto usage;
    if (opts.version) {   /* the rules of the command line alone: no input, no configuration */
        const P2sFileSettings *plain = main__settings_for(&opts, &settings, NULL);
        if (plain)
            main__version(&plain->rules);
        code = plain ? P2S_EXIT_OK : P2S_EXIT_USAGE;
        goto done;
    }
    /* Every input's configuration is read before anything runs: a broken one is a usage error
     * with nothing written. */
    for (size_t i = 0; i < opts.inputs.size; i++) {
        opts.input = opts.inputs.contents[i];
        char *path = main__config_path(&opts);
        const P2sFileSettings *one = main__settings_for(&opts, &settings, path);
        p2s_free(path);
        if (!one) {
            code = P2S_EXIT_USAGE;
            goto done;
        }
        array_push(&settings_of, one);
    }
    P2sReport report;
    p2s_report_init(&report, opts.format, main__use_color(&opts), opts.quiet, opts.lint ? stdout : stderr);
    for (size_t i = 0; i < opts.inputs.size; i++) {
        opts.input = opts.inputs.contents[i];
        code = main__worse(code, main__run_input(&opts, settings_of.contents[i], &report));
    }
    p2s_report_finish(&report);
    goto done;
usage:
    fprintf(stderr, "pylayer2static: error: %s\nTry 'pylayer2static --help' for more information.\n", err.buf);
    code = P2S_EXIT_USAGE;
done:
    array_delete(&settings_of);
    p2s_settings_cache_release(&settings);
    p2s_cli_release(&opts);
    p2s_strbuf_release(&err);
    if (fflush(stdout) != 0 && code == P2S_EXIT_OK)
        code = P2S_EXIT_IO;
    return code;
}
