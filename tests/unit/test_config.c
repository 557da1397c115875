/* Unit tests: [tool.pylayer2static] in pyproject.toml. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "config.h"

static int parse(const char *text, P2sConfig *out, P2sStrbuf *err)
{
    p2s_strbuf_reset(err);
    return p2s_config_parse("pyproject.toml", text, strlen(text), "/proj", out, err);
}

static void test_config_reads_our_table_only(void **state)
{
    (void)state;
    P2sConfig c;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    const char text[] =
        "[project]\nname = \"demo\"\nclassifiers = [\n  \"a\",\n  \"b\",\n]\n"
        "[tool.pylayer2static]\n"
        "select = [\"P2S1\", 'P2S201']  # trailing comment\n"
        "ignore = \"P2S300\"\n"
        "warn = [\"P2S101\", \"P2S106\"]\n"
        "exclude = [\n  \"gen/**\",\n]\n"
        "rules = [\"rules/extra.json\", \"/abs.json\"]\n"
        "jobs = 3\n"
        "src = [\"src\", \"/abs/lib\"]\n"
        "packages = [\"paddlenlp\"]\n"
        "[tool.other]\nselect = 5\n";
    assert_int_equal(parse(text, &c, &err), 0);
    assert_int_equal(c.select.size, 2);
    assert_string_equal(c.select.contents[1], "P2S201");
    assert_string_equal(c.ignore.contents[0], "P2S300");
    assert_int_equal(c.warn.size, 2);
    assert_string_equal(c.warn.contents[1], "P2S106");
    assert_string_equal(c.exclude.contents[0], "gen/**");
    assert_string_equal(c.rules.contents[0], "/proj/rules/extra.json");
    assert_string_equal(c.rules.contents[1], "/abs.json");
    assert_int_equal(c.jobs, 3);
    assert_true(c.has_src);
    assert_int_equal(c.src.size, 2);
    assert_string_equal(c.src.contents[0], "/proj/src");
    assert_string_equal(c.src.contents[1], "/abs/lib");
    p2s_config_release(&c);
    p2s_strbuf_release(&err);
}

static void test_config_errors_have_positions(void **state)
{
    (void)state;
    static const struct { const char *text, *error; } cases[] = {
        {"[tool.pylayer2static]\nselct = []\n", "pyproject.toml:2:1: error: unknown key (expected rules, select, ignore, warn, exclude, jobs, src or packages)"},
        {"[tool.pylayer2static]\npackages = \"paddlenlp\"\n", "pyproject.toml:2:12: error: expected an array of strings"},
        {"[tool.pylayer2static]\npackages = [\"a\", 3]\n", "pyproject.toml:2:18: error: expected a string"},
        {"[tool.pylayer2static]\njobs = 0\n", "pyproject.toml:2:8: error: expected a number of jobs from 1 to 256"},
        {"[tool.pylayer2static]\nselect = [\"P2S1\"\n", "pyproject.toml:3:1: error: expected ',' or ']'"},
        {"[tool.pylayer2static]\nignore = \"P2S\n", "pyproject.toml:2:14: error: unterminated string"},
        {"[tool.pylayer2static]\njobs = 2 3\n", "pyproject.toml:2:10: error: expected the end of the line after the value"},
    };
    P2sConfig c;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(parse(cases[i].text, &c, &err), -1);
        assert_string_equal(err.buf, cases[i].error);
    }
    p2s_strbuf_release(&err);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_reads_our_table_only),
        cmocka_unit_test(test_config_errors_have_positions),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
