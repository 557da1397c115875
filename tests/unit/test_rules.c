/* Unit tests: rules files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "rules.h"

static void test_rules_default_names_pylayer_bases(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    assert_int_equal(p2s_rules_load_default(&rules, &err), 0);
    assert_true(p2s_rules_is_pylayer_base(&rules, "paddle.autograd.PyLayer", 23));
    assert_false(p2s_rules_is_pylayer_base(&rules, "paddle.autograd", 15));
    assert_string_equal(rules.version, "1");
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_rules_syntax_error_has_line_and_column(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    p2s_rules_load_default(&rules, &err);
    const char text[] = "{\n  \"pylayer_bases\": [\"a.B\",,]\n}\n";
    assert_int_equal(p2s_rules_load_text(&rules, "r.json", text, sizeof text - 1, &err), -1);
    assert_string_equal(err.buf, "r.json:2:27: error: invalid JSON in rules file");
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_rules_shape_error_names_json_path_and_changes_nothing(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    p2s_rules_load_default(&rules, &err);
    size_t before = rules.pylayer_bases.size;
    const char text[] = "{\"pylayer_bases\": [\"my.Base\", 3]}";
    assert_int_equal(p2s_rules_load_text(&rules, "r.json", text, sizeof text - 1, &err), -1);
    assert_string_equal(err.buf, "r.json: /pylayer_bases/1: expected a qualified name such as \"paddle.autograd.PyLayer\"");
    assert_int_equal(rules.pylayer_bases.size, before);
    p2s_strbuf_reset(&err);
    const char unknown[] = "{\"pylayer_base\": []}";
    assert_int_equal(p2s_rules_load_text(&rules, "r.json", unknown, sizeof unknown - 1, &err), -1);
    assert_string_equal(err.buf, "r.json: /pylayer_base: unknown key");
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_rules_file_adds_bases(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    p2s_rules_load_default(&rules, &err);
    const char text[] = "{\"pylayer_bases\": [\"mylib.layers.MyPyLayer\"]}";
    assert_int_equal(p2s_rules_load_text(&rules, "r.json", text, sizeof text - 1, &err), 0);
    assert_true(p2s_rules_is_pylayer_base(&rules, "mylib.layers.MyPyLayer", 22));
    assert_true(p2s_rules_is_pylayer_base(&rules, "paddle.autograd.PyLayer", 23));
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_default_names_pylayer_bases),
        cmocka_unit_test(test_rules_syntax_error_has_line_and_column),
        cmocka_unit_test(test_rules_shape_error_names_json_path_and_changes_nothing),
        cmocka_unit_test(test_rules_file_adds_bases),
    };
    return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
