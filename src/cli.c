/* cli.c — option parsing. */
#include "cli.h"

#include <string.h>

#include "version.h"

static const char cli__usage[] =
    "usage: pylayer2static [OPTIONS] INPUT.py\n"
    "\n"
    "Rewrites PaddlePaddle PyLayer code so it runs as a static graph: every PyLayer.apply goes\n"
    "through pylayer2static_runtime, and each PyLayer gets a static builder that constructs a\n"
    "`pylayer` op with forward and backward sub-blocks.\n"
    "\n"
    "INPUT is a Python file, or - for standard input. The result goes to standard output unless\n"
    "-o or --in-place says otherwise; diagnostics go to standard error.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE        write the result to FILE atomically (- is standard output)\n"
    "  -i, --in-place           rewrite INPUT atomically\n"
    "      --stdin-filename NAME  the name used for standard input in messages\n"
    "      --output-format FMT  diagnostics as text (default) or json\n"
    "      --color WHEN         color diagnostics: auto (default), always, never\n"
    "  -q, --quiet              print errors only\n"
    "      --parse-only         parse and report syntax errors only; output is the input\n"
    "      --rules FILE         read more rules from FILE over the built-in ones (repeatable)\n"
    "  -h, --help               show this help and exit\n"
    "      --version            show tool, grammar and rules versions and exit\n"
    "\n"
    "exit codes:\n"
    "  0    success (warnings and notes allowed)\n"
    "  1    the input has errors: syntax, encoding (NUL bytes, invalid UTF-8, a non-UTF-8\n"
    "       coding cookie), PyLayer contract errors\n"
    "  2    usage, configuration or rules-file error\n"
    "  3    I/O error: cannot read the input or write the output\n"
    "  4    internal error: the output failed verification, out of memory\n"
    "  130  interrupted (SIGINT/SIGTERM); temporary files are removed\n";

void p2s_cli_usage(P2sStrbuf *out)
{
    p2s_strbuf_adds(out, cli__usage);
}

static int cli__fail(P2sStrbuf *err, const char *fmt, const char *arg)
{
    p2s_strbuf_addf(err, fmt, arg);
    return -1;
}

/* `--name VALUE` or `--name=VALUE`; advances *i past a separate value. NULL when arg is not
 * this option; sets *missing when the value is absent. */
static const char *cli__value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
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

int p2s_cli_parse(int argc, char **argv, P2sOptions *out, P2sStrbuf *err)
{
    static const char *const formats[] = {"text", "json"};
    static const char *const colors[] = {"auto", "always", "never"};
    memset(out, 0, sizeof *out);
    bool only_operands = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value;
        bool missing = false;
        if (only_operands || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (out->input)
                return cli__fail(err, "unexpected extra input '%s' (one INPUT at a time)", arg);
            out->input = arg;
        } else if (strcmp(arg, "--") == 0) {
            only_operands = true;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            out->help = true;
        } else if (strcmp(arg, "--version") == 0) {
            out->version = true;
        } else if (strcmp(arg, "-i") == 0 || strcmp(arg, "--in-place") == 0) {
            out->in_place = true;
        } else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
            out->quiet = true;
        } else if (strcmp(arg, "--parse-only") == 0) {
            out->parse_only = true;
        } else if (strcmp(arg, "-o") == 0) {
            if (i + 1 >= argc)
                return cli__fail(err, "option '%s' needs a value", arg);
            out->output = argv[++i];
        } else if ((value = cli__value(argc, argv, &i, "--output-format", &missing))) {
            int k = cli__parse_choice("--output-format", value, formats, 2, err);
            if (k < 0)
                return -1;
            out->format = (P2sFormat)k;
        } else if ((value = cli__value(argc, argv, &i, "--output", &missing))) {
            out->output = value;
        } else if ((value = cli__value(argc, argv, &i, "--color", &missing))) {
            int k = cli__parse_choice("--color", value, colors, 3, err);
            if (k < 0)
                return -1;
            out->color = (P2sColor)k;
        } else if ((value = cli__value(argc, argv, &i, "--stdin-filename", &missing))) {
            out->stdin_filename = value;
        } else if ((value = cli__value(argc, argv, &i, "--rules", &missing))) {
            if (out->rules_count == P2S_MAX_RULES_FILES)
                return cli__fail(err, "too many --rules files (at most %s)", "16");
            out->rules_files[out->rules_count++] = value;
        } else if (missing) {
            return cli__fail(err, "option '%s' needs a value", arg);
        } else {
            return cli__fail(err, "unrecognized option '%s'", arg);
        }
    }
    if (out->help || out->version)
        return 0;
    if (!out->input)
        return cli__fail(err, "%s", "no INPUT given");
    if (out->in_place && out->output)
        return cli__fail(err, "%s", "--in-place and -o cannot be combined");
    if (out->in_place && strcmp(out->input, "-") == 0)
        return cli__fail(err, "%s", "--in-place needs a file, not standard input");
    return 0;
}
