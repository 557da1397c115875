/* cli.c — option parsing. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char cli__usage[] =
    "usage: pylayer2static [OPTIONS] INPUT.py [-o OUTPUT.py]\n"
    "       pylayer2static [OPTIONS] SRC_DIR -o OUT_DIR\n"
    "       pylayer2static --lint|--list|--check|--diff|--in-place [OPTIONS] INPUT...\n"
    "       pylayer2static lsp [--stdio]\n"
    "       pylayer2static run [RUN-OPTIONS] SCRIPT.py [ARGS...] | run [RUN-OPTIONS] -m MODULE [ARGS...]\n"
    "\n"
    "Rewrites PaddlePaddle PyLayer code so it runs as a static graph: every PyLayer.apply goes\n"
    "through pylayer2static_runtime, and each PyLayer gets a static builder that constructs a\n"
    "`pylayer` op with forward and backward sub-blocks.\n"
    "\n"
    "INPUT is a Python file, or - for standard input; the result goes to standard output unless\n"
    "-o or --in-place says otherwise. A directory is transpiled as a tree into OUT_DIR.\n"
    "Diagnostics go to standard error (to standard output with --lint).\n"
    "\n"
    "output:\n"
    "  -o, --output PATH        write the result to PATH atomically (- is standard output)\n"
    "  -i, --in-place           rewrite INPUT atomically\n"
    "      --check              write nothing; exit 1 if the output (or, without -o, the input)\n"
    "                           is missing or not what this run would write\n"
    "      --diff               write nothing; print a unified diff of what would change\n"
    "      --lint               diagnostics only, on standard output; write nothing\n"
    "      --list               print each PyLayer class and .apply site; write nothing\n"
    "      --parse-only         parse and report syntax errors only; the output is the input\n"
    "\n"
    "diagnostics:\n"
    "      --output-format FMT  text (default), json or sarif\n"
    "      --color WHEN         auto (default), always or never\n"
    "  -q, --quiet              print errors only\n"
    "      --stdin-filename NAME  the name of standard input in messages\n"
    "      --select CODES       report only these codes (comma-separated prefixes: P2S1,P2S201)\n"
    "      --ignore CODES       do not report these codes (prefixes)\n"
    "      --warn CODES         report these codes as warnings where they are errors (prefixes):\n"
    "                           the run passes; the classes they concern are still left as written\n"
    "\n"
    "tree mode:\n"
    "      --exclude GLOB       skip matching paths (repeatable; .gitignore is respected too)\n"
    "  -j, --jobs N             worker threads (default: the number of processors)\n"
    "      --depfile FILE       write make/ninja dependencies of every output to FILE\n"
    "\n"
    "configuration:\n"
    "      --rules FILE         read more rules from FILE over the built-in ones (repeatable)\n"
    "      --config FILE        read [tool.pylayer2static] from FILE, not the nearest pyproject.toml\n"
    "      --no-config          read no pyproject.toml\n"
    "  -h, --help               show this help and exit\n"
    "      --version            show tool, grammar and rules versions and exit\n"
    "\n"
    "commands (as the first argument):\n"
    "  lsp [--stdio]            run the language server (LSP 3.17 over standard input and output)\n"
    "  run ARGS...              run a program with its PyLayers made static on import, no copy\n"
    "                           tree: executes ${P2S_PYTHON:-python3} -m pylayer2static_runtime.run\n"
    "                           ARGS... with P2S_BIN set to this program (run --help: its options)\n"
    "\n"
    "exit codes:\n"
    "  0    success (warnings and notes allowed)\n"
    "  1    the input has errors: syntax, encoding (NUL bytes, invalid UTF-8, a non-UTF-8\n"
    "       coding cookie), PyLayer contract errors; or --check found a stale or missing output.\n"
    "       With contract errors the output is still made: the classes at fault are left as\n"
    "       written (eager mode, the framework's own to_static), the rest is transpiled\n"
    "  2    usage, configuration or rules-file error\n"
    "  3    I/O error: cannot read the input or write the output\n"
    "  4    internal error: the output failed verification, out of memory\n"
    "  127  run: the Python interpreter cannot be executed (otherwise run exits as the program)\n"
    "  130  interrupted (SIGINT/SIGTERM); temporary files are removed\n";

void p2s_cli_usage(P2sStrbuf *out)
{
    p2s_strbuf_adds(out, cli__usage);
}

void p2s_cli_release(P2sOptions *opts)
{
    array_delete(&opts->inputs);
    p2s_settings_release(&opts->settings);
    array_delete(&opts->excludes);
}

static int cli__fail(P2sStrbuf *err, const char *fmt, const char *arg)
{
    p2s_strbuf_addf(err, fmt, arg);
    return -1;
}

/* `--name VALUE` or `--name=VALUE` (and `-x VALUE` for a short name); advances *i past a
 * separate value. NULL when arg is not this option; sets *missing when the value is absent. */
static const char *cli__value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=' && name[1] == '-')
        return arg + n + 1;
    if (arg[n] != '\0')
        return name[1] == '-' ? NULL : arg + n;  /* -ofile, -j4 */
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static int cli__parse_choice(const char *option, const char *value, const char *const *choices,
                             int count, P2sStrbuf *err)
{
    for (int k = 0; k < count; k++)
        if (strcmp(value, choices[k]) == 0)
            return k;
    p2s_strbuf_addf(err, "invalid value '%s' for %s", value, option);
    return -1;
}

static int cli__jobs(const char *value, unsigned *out, P2sStrbuf *err)
{
    char *end;
    unsigned long n = strtoul(value, &end, 10);
    if (!*value || *end || n == 0 || n > 256)
        return cli__fail(err, "invalid value '%s' for --jobs (1 to 256)", value);
    *out = (unsigned)n;
    return 0;
}

typedef struct {
    const char *long_name, *short_name;
    bool *flag;
} CliFlag;

int p2s_cli_parse(int argc, char **argv, P2sOptions *out, P2sStrbuf *err)
{
    static const char *const formats[] = {"text", "json", "sarif"};
    static const char *const colors[] = {"auto", "always", "never"};
    memset(out, 0, sizeof *out);
    out->settings.command_line = true;
    const CliFlag flags[] = {
        {"--help", "-h", &out->help}, {"--version", NULL, &out->version},
        {"--in-place", "-i", &out->in_place}, {"--quiet", "-q", &out->quiet},
        {"--parse-only", NULL, &out->parse_only}, {"--check", NULL, &out->check},
        {"--diff", NULL, &out->diff}, {"--lint", NULL, &out->lint}, {"--list", NULL, &out->list},
        {"--no-config", NULL, &out->settings.no_config},
    };
    bool only_operands = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value;
        bool missing = false, matched = false;
        if (only_operands || arg[0] != '-' || strcmp(arg, "-") == 0) {
            array_push(&out->inputs, arg);
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_operands = true;
            continue;
        }
        for (size_t k = 0; k < sizeof flags / sizeof flags[0] && !matched; k++) {
            if (strcmp(arg, flags[k].long_name) == 0 || (flags[k].short_name && strcmp(arg, flags[k].short_name) == 0)) {
                *flags[k].flag = true;
                matched = true;
            }
        }
        if (matched)
            continue;
        if ((value = cli__value(argc, argv, &i, "-o", &missing)) ||
            (value = cli__value(argc, argv, &i, "--output", &missing))) {
            out->output = value;
        } else if ((value = cli__value(argc, argv, &i, "--output-format", &missing))) {
            int k = cli__parse_choice("--output-format", value, formats, 3, err);
            if (k < 0)
                return -1;
            out->format = (P2sFormat)k;
        } else if ((value = cli__value(argc, argv, &i, "--color", &missing))) {
            int k = cli__parse_choice("--color", value, colors, 3, err);
            if (k < 0)
                return -1;
            out->color = (P2sColor)k;
        } else if ((value = cli__value(argc, argv, &i, "--stdin-filename", &missing))) {
            out->stdin_filename = value;
        } else if ((value = cli__value(argc, argv, &i, "--rules", &missing))) {
            array_push(&out->settings.rules_files, p2s_strdup(value));
        } else if ((value = cli__value(argc, argv, &i, "--select", &missing))) {
            array_push(&out->settings.select, p2s_strdup(value));
            out->settings.select_given = true;
        } else if ((value = cli__value(argc, argv, &i, "--ignore", &missing))) {
            array_push(&out->settings.ignore, p2s_strdup(value));
        } else if ((value = cli__value(argc, argv, &i, "--warn", &missing))) {
            array_push(&out->settings.warn, p2s_strdup(value));
        } else if ((value = cli__value(argc, argv, &i, "--exclude", &missing))) {
            array_push(&out->excludes, value);
        } else if ((value = cli__value(argc, argv, &i, "-j", &missing)) ||
                   (value = cli__value(argc, argv, &i, "--jobs", &missing))) {
            if (cli__jobs(value, &out->jobs, err) < 0)
                return -1;
        } else if ((value = cli__value(argc, argv, &i, "--depfile", &missing))) {
            out->depfile = value;
        } else if ((value = cli__value(argc, argv, &i, "--config", &missing))) {
            p2s_free(out->settings.config);
            out->settings.config = p2s_strdup(value);
        } else if (missing) {
            return cli__fail(err, "option '%s' needs a value", arg);
        } else {
            return cli__fail(err, "unrecognized option '%s'", arg);
        }
    }
    if (out->help || out->version)
        return 0;
    if (!out->inputs.size)
        return cli__fail(err, "%s", "no INPUT given");
    out->input = out->inputs.contents[0];
    if (out->inputs.size > 1 && out->output)
        return cli__fail(err, "%s", "-o takes one INPUT; several inputs are for --lint, --list, --check, --diff or --in-place");
    if (out->inputs.size > 1 && !out->lint && !out->list && !out->check && !out->diff && !out->in_place &&
        !out->parse_only)
        return cli__fail(err, "%s", "several inputs need --lint, --list, --check, --diff or --in-place (or use a directory)");
    for (size_t i = 0; i < out->inputs.size && out->inputs.size > 1; i++)
        if (strcmp(out->inputs.contents[i], "-") == 0)
            return cli__fail(err, "%s", "standard input cannot be one of several inputs");
    if (out->in_place && out->output)
        return cli__fail(err, "%s", "--in-place and -o cannot be combined");
    if (out->in_place && strcmp(out->input, "-") == 0)
        return cli__fail(err, "%s", "--in-place needs a file, not standard input");
    if (out->lint + out->list + out->parse_only > 1)
        return cli__fail(err, "%s", "--lint, --list and --parse-only exclude each other");
    return 0;
}

int p2s_cli_validate(const P2sOptions *opts, bool tree_mode, P2sStrbuf *err)
{
    if (tree_mode) {
        bool writes = !opts->lint && !opts->list;
        if (writes && !opts->in_place && (!opts->output || strcmp(opts->output, "-") == 0))
            return cli__fail(err, "%s", "a directory INPUT needs -o OUT_DIR (or --in-place)");
        if (opts->stdin_filename)
            return cli__fail(err, "%s", "--stdin-filename is for standard input");
        return 0;
    }
    if (opts->excludes.size || opts->depfile || opts->jobs)
        return cli__fail(err, "%s", "--exclude, --jobs and --depfile are for a directory INPUT");
    return 0;
}
