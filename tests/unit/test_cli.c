/* Unit tests: option parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"

static int parse(P2sOptions *opts, P2sStrbuf *err, int argc, const char *const *argv)
{
    p2s_strbuf_reset(err);
    return p2s_cli_parse(argc, (char **)argv, opts, err);
}

static void test_cli_reads_output_forms(void **state)
{
    (void)state;
    P2sOptions o;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    const char *a[] = {"p2s", "in.py", "-o", "out.py", "--output-format=json", "--color", "never"};
    assert_int_equal(parse(&o, &err, 7, a), 0);
    assert_string_equal(o.input, "in.py");
    assert_string_equal(o.output, "out.py");
    assert_int_equal(o.format, P2S_FORMAT_JSON);
    assert_int_equal(o.color, P2S_COLOR_NEVER);
    p2s_cli_release(&o);
    const char *b[] = {"p2s", "--output=x.py", "-", "--stdin-filename", "m.py"};
    assert_int_equal(parse(&o, &err, 5, b), 0);
    assert_string_equal(o.input, "-");
    assert_string_equal(o.output, "x.py");
    assert_string_equal(o.stdin_filename, "m.py");
    p2s_cli_release(&o);
    p2s_strbuf_release(&err);
}

static void test_cli_collects_selections(void **state)
{
    (void)state;
    P2sOptions o;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    const char *a[] = {"p2s", "in.py", "--warn", "P2S101,P2S106", "--ignore=P2S300", "--warn=P2S105"};
    assert_int_equal(parse(&o, &err, 6, a), 0);
    assert_int_equal(o.settings.warn.size, 2);
    assert_string_equal(o.settings.warn.contents[0], "P2S101,P2S106");
    assert_string_equal(o.settings.warn.contents[1], "P2S105");
    assert_int_equal(o.settings.ignore.size, 1);
    assert_false(o.settings.select_given);
    p2s_cli_release(&o);
    p2s_strbuf_release(&err);
}

static void test_cli_rejects_bad_usage_with_a_reason(void **state)
{
    (void)state;
    static const struct { int argc; const char *argv[4]; const char *reason; } cases[] = {
        {2, {"p2s", "--nope"}, "unrecognized option '--nope'"},
        {1, {"p2s"}, "no INPUT given"},
        {3, {"p2s", "a.py", "b.py"}, "several inputs need --lint, --list, --check, --diff or --in-place (or use a directory)"},
        {4, {"p2s", "a.py", "b.py", "-o"}, "option '-o' needs a value"},
        {4, {"p2s", "--lint", "a.py", "-"}, "standard input cannot be one of several inputs"},
        {4, {"p2s", "a.py", "-i", "-o"}, "option '-o' needs a value"},
        {4, {"p2s", "a.py", "-i", "-z"}, "unrecognized option '-z'"},
        {3, {"p2s", "a.py", "-j0"}, "invalid value '0' for --jobs (1 to 256)"},
        {4, {"p2s", "a.py", "--lint", "--list"}, "--lint, --list and --parse-only exclude each other"},
        {3, {"p2s", "-", "--in-place"}, "--in-place needs a file, not standard input"},
        {3, {"p2s", "a.py", "--output-format=xml"}, "invalid value 'xml' for --output-format"},
        {3, {"p2s", "a.py", "--rules"}, "option '--rules' needs a value"},
        {3, {"p2s", "a.py", "--warn"}, "option '--warn' needs a value"},
    };
    P2sOptions o;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(parse(&o, &err, cases[i].argc, cases[i].argv), -1);
        assert_string_equal(err.buf, cases[i].reason);
        p2s_cli_release(&o);
    }
    p2s_strbuf_release(&err);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_reads_output_forms),
        cmocka_unit_test(test_cli_collects_selections),
        cmocka_unit_test(test_cli_rejects_bad_usage_with_a_reason),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
