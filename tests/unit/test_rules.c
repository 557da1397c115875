/* Unit tests: rules files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
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

static void load_defaults(P2sRules *rules, P2sStrbuf *err)
{
    p2s_strbuf_init(err);
    assert_int_equal(p2s_rules_load_default(rules, err), 0);
}

static int load(P2sRules *rules, const char *text, P2sStrbuf *err)
{
    p2s_strbuf_reset(err);
    return p2s_rules_load_text(rules, "r.json", text, strlen(text), err);
}

static void test_rules_default_table_holds_every_code(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    load_defaults(&rules, &err);
    static const char *const codes[] = {
        "P2S001", "P2S002", "P2S003", "P2S004", "P2S005", "P2S006", "P2S090", "P2S900", "P2S101", "P2S102", "P2S103",
        "P2S104", "P2S105", "P2S106", "P2S107", "P2S108", "P2S109", "P2S110", "P2S111", "P2S112",
        "P2S113", "P2S201", "P2S202", "P2S203", "P2S204", "P2S300", "P2S301", "P2S302",
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        assert_non_null(p2s_rules_diag(&rules, codes[i]));
    assert_int_equal(rules.diagnostics.size, sizeof codes / sizeof codes[0]);
    assert_int_equal(p2s_rules_diag(&rules, "P2S101")->severity, P2S_ERROR);
    assert_int_equal(p2s_rules_diag(&rules, "P2S102")->severity, P2S_WARNING);  /* forward-only runs */
    assert_int_equal(p2s_rules_diag(&rules, "P2S201")->severity, P2S_WARNING);
    assert_int_equal(p2s_rules_diag(&rules, "P2S300")->severity, P2S_NOTE);
    assert_false(p2s_rules_diag(&rules, "P2S001")->configurable);
    assert_true(p2s_rules_diag(&rules, "P2S090")->configurable);
    const P2sCtxMethod *save = p2s_rules_ctx_role(&rules, P2S_CTX_SAVE);
    assert_string_equal(save->name, "save_for_backward");
    assert_int_equal(save->allowed_in, P2S_IN_FORWARD);
    assert_string_equal(p2s_rules_ctx_role(&rules, P2S_CTX_LOAD)->name, "saved_tensor");
    assert_string_equal(p2s_rules_hazard(&rules, false, "numpy", 5)->code, "P2S201");
    assert_string_equal(p2s_rules_hazard(&rules, true, "float", 5)->code, "P2S204");
    assert_null(p2s_rules_hazard(&rules, true, "numpy", 5));
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_rules_file_overrides_diagnostics_methods_and_hazards(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    load_defaults(&rules, &err);
    assert_int_equal(load(&rules, "{\"diagnostics\": {\"P2S202\": {\"severity\": \"error\", \"fix\": null}},"
                                  " \"ctx_methods\": {\"mark_not_inplace\": null, \"keep\": {\"allowed_in\": [\"forward\", \"backward\"]}},"
                                  " \"static_graph_hazards\": {\"methods\": {\"item\": null, \"cpu\": \"P2S201\"}, \"builtins\": {\"bool\": \"P2S204\"}}}",
                          &err), 0);
    const P2sRuleDiag *item = p2s_rules_diag(&rules, "P2S202");
    assert_int_equal(item->severity, P2S_ERROR);
    assert_null(item->fix);
    assert_non_null(strstr(item->message, "{call}"));   /* a field not given keeps its value */
    assert_null(p2s_rules_ctx_method(&rules, "mark_not_inplace", 16));
    assert_int_equal(p2s_rules_ctx_method(&rules, "keep", 4)->allowed_in, P2S_IN_FORWARD | P2S_IN_BACKWARD);
    assert_null(p2s_rules_hazard(&rules, false, "item", 4));
    assert_string_equal(p2s_rules_hazard(&rules, false, "cpu", 3)->code, "P2S201");
    assert_string_equal(p2s_rules_hazard(&rules, true, "bool", 4)->code, "P2S204");
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_rules_file_shape_errors_name_the_path(void **state)
{
    (void)state;
    static const struct { const char *text, *error; } bad[] = {
        {"{\"diagnostics\": {\"P2S999\": {\"severity\": \"error\", \"message\": \"x\"}}}",
         "r.json: /diagnostics/P2S999: unknown diagnostic code (a rules file changes the codes of docs/rules.md; it cannot add checks)"},
        {"{\"diagnostics\": {\"P2S001\": {\"severity\": \"warning\"}}}",
         "r.json: /diagnostics/P2S001: this diagnostic comes from the pipeline itself and cannot be changed"},
        {"{\"diagnostics\": {\"P2S201\": {\"severity\": \"fatal\"}}}",
         "r.json: /diagnostics/P2S201/severity: expected \"error\", \"warning\" or \"note\""},
        {"{\"diagnostics\": {\"P2S201\": {\"message\": \"bad {clas}\"}}}",
         "r.json: /diagnostics/P2S201/message: unknown placeholder; known: {class} {method} {name} {expected} {given} {accepted} {line} {call} {object} {allowed} {where} {save}"},
        {"{\"diagnostics\": {\"P2S201\": {\"fix\": \"a } b\"}}}",
         "r.json: /diagnostics/P2S201/fix: a lone '}' (write '}}' for a brace)"},
        {"{\"diagnostics\": {\"P2S201\": {\"configurable\": false}}}",
         "r.json: /diagnostics/P2S201/configurable: unknown key"},
        {"{\"diagnostics\": {\"X1\": {}}}",
         "r.json: /diagnostics/X1: expected a code such as \"P2S101\""},
        {"{\"ctx_methods\": {\"save_for_backward\": {\"allowed_in\": [\"init\"]}}}",
         "r.json: /ctx_methods/save_for_backward/allowed_in/0: expected \"forward\" or \"backward\""},
        {"{\"ctx_methods\": {\"keep\": {\"allowed_in\": [\"forward\"], \"role\": \"stash\"}}}",
         "r.json: /ctx_methods/keep/role: expected \"save\" or \"load\""},
        {"{\"static_graph_hazards\": {\"methods\": {\"cpu\": \"P2S777\"}}}",
         "r.json: /static_graph_hazards/methods/cpu: names a code that is not in the diagnostics table"},
        {"{\"static_graph_hazards\": {\"calls\": {}}}",
         "r.json: /static_graph_hazards/calls: unknown key (expected methods or builtins)"},
        {"{\"paddle_pylayer_apis\": [\"paddle.x\"]}",
         "r.json: /paddle_pylayer_apis: expected an object: module path -> array of names"},
        {"{\"paddle_pylayer_apis\": {\"paddle..utils\": [\"recompute\"]}}",
         "r.json: /paddle_pylayer_apis/paddle..utils: expected a module path such as \"paddle.distributed.fleet.utils\""},
        {"{\"paddle_pylayer_apis\": {\"paddle.utils\": \"recompute\"}}",
         "r.json: /paddle_pylayer_apis/paddle.utils: expected an array of names"},
        {"{\"paddle_pylayer_apis\": {\"paddle.utils\": [\"ok\", \"a.b\"]}}",
         "r.json: /paddle_pylayer_apis/paddle.utils/1: expected a Python name such as \"recompute\""},
    };
    P2sRules rules;
    P2sStrbuf err;
    load_defaults(&rules, &err);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(load(&rules, bad[i].text, &err), -1);
        assert_string_equal(err.buf, bad[i].error);
    }
    /* Nothing of a rejected file is applied. */
    assert_int_equal(p2s_rules_diag(&rules, "P2S201")->severity, P2S_WARNING);
    assert_int_equal(load(&rules, "{\"diagnostics\": {\"P2S201\": {\"severity\": \"error\"}}, \"pylayer_bases\": [1]}", &err), -1);
    assert_int_equal(p2s_rules_diag(&rules, "P2S201")->severity, P2S_WARNING);
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static bool is_api(const P2sRules *rules, const char *qualname)
{
    return p2s_rules_is_paddle_api(rules, qualname, strlen(qualname));
}

static void words_of(const P2sRules *rules, P2sStrbuf *out)
{
    p2s_strbuf_reset(out);
    for (size_t i = 0; i < rules->paddle_api_words.size; i++)
        p2s_strbuf_addf(out, "%s%s", i ? "," : "", rules->paddle_api_words.contents[i]);
}

static void test_rules_paddle_pylayer_apis_name_modules_and_their_words(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err, words;
    load_defaults(&rules, &err);
    p2s_strbuf_init(&words);
    assert_true(is_api(&rules, "paddle.distributed.fleet.utils.recompute"));
    assert_true(is_api(&rules, "paddle.distributed.fleet.recompute.recompute"));
    assert_true(is_api(&rules, "paddle.distributed.fleet.recompute.recompute.recompute_sequential"));
    assert_true(is_api(&rules, "paddle.distributed.fleet.utils.sequence_parallel_utils.ScatterOp"));
    /* fleet's model-parallel ops build the framework's own collectives in a static graph */
    assert_false(is_api(&rules, "paddle.distributed.fleet.layers.mpu.mp_ops._c_identity"));
    assert_false(is_api(&rules, "paddle.distributed.fleet.meta_parallel.ColumnParallelLinear"));
    assert_false(is_api(&rules, "paddle.distributed.fleet.utils"));
    assert_false(is_api(&rules, "paddle.distributed.fleet.recompute"));
    assert_false(is_api(&rules, "paddle.autograd.PyLayer"));
    /* a word that holds another is spelled through it: every use spells one of these */
    words_of(&rules, &words);
    assert_string_equal(words.buf, "recompute,ScatterOp,GatherOp");
    /* a rules file adds to them; its words join */
    assert_int_equal(load(&rules, "{\"paddle_pylayer_apis\": {\"$comment\": \"x\", \"mylib.ops\": [\"FusedOp\", \"Op\"]}}", &err), 0);
    assert_true(is_api(&rules, "mylib.ops.FusedOp"));
    assert_true(is_api(&rules, "paddle.distributed.fleet.utils.recompute"));
    words_of(&rules, &words);
    assert_non_null(strstr(words.buf, ",Op"));
    assert_null(strstr(words.buf, "FusedOp"));
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
    p2s_strbuf_release(&words);
}

static void test_rules_lowered_errors_still_leave_their_class_as_written(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    load_defaults(&rules, &err);
    assert_true(p2s_rules_leaves_as_written(&rules, "P2S105"));
    assert_false(p2s_rules_leaves_as_written(&rules, "P2S201"));
    assert_int_equal(p2s_rules_warn(&rules, "P2S10", &err), 0);
    assert_int_equal(p2s_rules_diag(&rules, "P2S105")->severity, P2S_WARNING);
    assert_int_equal(p2s_rules_diag(&rules, "P2S102")->severity, P2S_WARNING);
    assert_int_equal(p2s_rules_diag(&rules, "P2S110")->severity, P2S_ERROR);   /* not matched */
    assert_int_equal(p2s_rules_diag(&rules, "P2S001")->severity, P2S_ERROR);   /* not configurable */
    assert_true(p2s_rules_leaves_as_written(&rules, "P2S105"));
    assert_false(p2s_rules_leaves_as_written(&rules, "P2S102"));
    assert_int_equal(p2s_rules_warn(&rules, "P2S7", &err), -1);
    p2s_strbuf_reset(&err);
    assert_int_equal(p2s_rules_apply_selectors(&rules, P2S_RULES_WARN, "P2S110,P2S111", &err), 0);
    assert_int_equal(p2s_rules_diag(&rules, "P2S111")->severity, P2S_WARNING);
    assert_int_equal(p2s_rules_apply_selectors(&rules, P2S_RULES_IGNORE, "P2S300,P2S9", &err), -1);
    assert_string_equal(err.buf, "unknown rule selector 'P2S9': expected ALL or a prefix of a code such as P2S1 or P2S105 (docs/rules.md)");
    assert_int_equal(p2s_rules_diag(&rules, "P2S112")->severity, P2S_ERROR);
    /* A rules file lowers a severity the same way; raising one leaves the class as written. */
    const char overlay[] = "{\"diagnostics\": {\"P2S110\": {\"severity\": \"note\"}, \"P2S201\": {\"severity\": \"error\"}}}";
    assert_int_equal(p2s_rules_load_text(&rules, "r.json", overlay, sizeof overlay - 1, &err), 0);
    assert_true(p2s_rules_leaves_as_written(&rules, "P2S110"));
    assert_true(p2s_rules_leaves_as_written(&rules, "P2S201"));
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_rules_selection_follows_ruff(void **state)
{
    (void)state;
    P2sRules rules;
    P2sStrbuf err;
    load_defaults(&rules, &err);
    assert_true(p2s_rules_code_enabled(&rules, "P2S201"));             /* default: ALL */
    assert_int_equal(p2s_rules_ignore(&rules, "P2S2", &err), 0);
    assert_false(p2s_rules_code_enabled(&rules, "P2S201"));
    assert_true(p2s_rules_code_enabled(&rules, "P2S101"));
    assert_int_equal(p2s_rules_select(&rules, "P2S201", &err), 0);      /* more specific select wins */
    assert_true(p2s_rules_code_enabled(&rules, "P2S201"));
    assert_false(p2s_rules_code_enabled(&rules, "P2S202"));
    assert_false(p2s_rules_code_enabled(&rules, "P2S101"));            /* an explicit select drops ALL */
    assert_true(p2s_rules_code_enabled(&rules, "P2S001"));             /* pipeline codes stay */
    p2s_rules_selection_reset(&rules);
    assert_int_equal(p2s_rules_select(&rules, "P2S1", &err), 0);
    assert_int_equal(p2s_rules_ignore(&rules, "P2S1", &err), 0);       /* a tie: ignore wins */
    assert_false(p2s_rules_code_enabled(&rules, "P2S105"));
    p2s_rules_selection_reset(&rules);
    assert_int_equal(p2s_rules_select(&rules, "ALL", &err), 0);
    assert_int_equal(p2s_rules_ignore(&rules, "ALL", &err), 0);
    assert_false(p2s_rules_code_enabled(&rules, "P2S300"));
    p2s_rules_selection_reset(&rules);
    assert_true(p2s_rules_code_enabled(&rules, "P2S300"));
    assert_int_equal(p2s_rules_select(&rules, "P2S7", &err), -1);
    assert_string_equal(err.buf, "unknown rule selector 'P2S7': expected ALL or a prefix of a code such as P2S1 or P2S105 (docs/rules.md)");
    p2s_strbuf_reset(&err);
    assert_int_equal(p2s_rules_ignore(&rules, "P2S001", &err), -1);    /* not configurable */
    p2s_strbuf_reset(&err);
    assert_int_equal(p2s_rules_ignore(&rules, "", &err), -1);
    assert_int_equal(rules.ignore.size, 0);
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_rules_format_fills_placeholders_and_braces(void **state)
{
    (void)state;
    P2sStrbuf out;
    p2s_strbuf_init(&out);
    const char *kv[] = {"class", "Tanh", "given", "2"};
    p2s_rules_format("'{class}' got {given} {{not a key}} {missing}}}", kv, 2, &out);
    assert_string_equal(out.buf, "'Tanh' got 2 {not a key} }");
    p2s_strbuf_release(&out);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_default_names_pylayer_bases),
        cmocka_unit_test(test_rules_syntax_error_has_line_and_column),
        cmocka_unit_test(test_rules_shape_error_names_json_path_and_changes_nothing),
        cmocka_unit_test(test_rules_file_adds_bases),
        cmocka_unit_test(test_rules_default_table_holds_every_code),
        cmocka_unit_test(test_rules_file_overrides_diagnostics_methods_and_hazards),
        cmocka_unit_test(test_rules_file_shape_errors_name_the_path),
        cmocka_unit_test(test_rules_paddle_pylayer_apis_name_modules_and_their_words),
        cmocka_unit_test(test_rules_lowered_errors_still_leave_their_class_as_written),
        cmocka_unit_test(test_rules_selection_follows_ruff),
        cmocka_unit_test(test_rules_format_fills_placeholders_and_braces),
    };
    return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
