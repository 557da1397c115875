/* Unit tests: `# noqa` comments and selection applied to a sink. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "suppress.h"

static bool noqa(const char *line, const char *code)
{
    P2sSource src;
    p2s_source_from_bytes(&src, "t.py", line, strlen(line));
    bool covered = p2s_suppress_noqa(&src, 1, code);
    p2s_source_release(&src);
    return covered;
}

static void test_suppress_noqa_forms(void **state)
{
    (void)state;
    assert_true(noqa("x = t.numpy()  # noqa\n", "P2S201"));
    assert_true(noqa("x = t.numpy()  #noqa\n", "P2S201"));
    assert_true(noqa("x = t.numpy()  # NoQA\n", "P2S201"));
    assert_true(noqa("x = t.numpy()  # noqa: P2S201\n", "P2S201"));
    assert_true(noqa("x = t.numpy()  # noqa:P2S202,P2S201\n", "P2S201"));
    assert_true(noqa("x = t.numpy()  # noqa: P2S202 P2S201 because\n", "P2S201"));
    assert_true(noqa("x = 1  # type: ignore  # noqa: P2S201\r\n", "P2S201"));
    assert_false(noqa("x = t.numpy()  # noqa: P2S202\n", "P2S201"));
    assert_false(noqa("x = t.numpy()  # noqa: P2S2\n", "P2S201"));     /* codes are exact, as in ruff */
    assert_false(noqa("x = t.numpy()  # noqa: later\n", "P2S201"));    /* no valid code: no noqa */
    assert_false(noqa("x = t.numpy()  # noqalike\n", "P2S201"));
    assert_false(noqa("x = t.numpy()  # see noqa\n", "P2S201"));
    assert_false(noqa("x = t.numpy()\n", "P2S201"));
}

static void test_suppress_filter_keeps_order_and_recounts_errors(void **state)
{
    (void)state;
    const char text[] = "a\nb  # noqa: P2S111\nc\n";
    P2sSource src;
    P2sDiagSink sink;
    P2sRules rules;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    p2s_diag_sink_init(&sink);
    p2s_rules_load_default(&rules, &err);
    p2s_source_from_bytes(&src, "t.py", text, sizeof text - 1);
    p2s_diag_emitf(&sink, P2S_ERROR, "P2S001", p2s_span(0, 1), "kept: before from");
    p2s_diag_emitf(&sink, P2S_ERROR, "P2S111", p2s_span(2, 3), "hidden by noqa");
    p2s_diag_emitf(&sink, P2S_ERROR, "P2S110", p2s_span(2, 3), "kept: other code");
    p2s_diag_emitf(&sink, P2S_WARNING, "P2S201", p2s_span(20, 21), "hidden by ignore");
    p2s_diag_emitf(&sink, P2S_ERROR, "P2S001", p2s_span(20, 21), "kept: not configurable");
    p2s_rules_ignore(&rules, "P2S2", &err);
    p2s_rules_ignore(&rules, "P2S0", &err);
    p2s_suppress_filter(&sink, 1, &src, &rules);
    assert_int_equal(sink.items.size, 3);
    assert_string_equal(sink.items.contents[0].message, "kept: before from");
    assert_string_equal(sink.items.contents[1].message, "kept: other code");
    assert_string_equal(sink.items.contents[2].message, "kept: not configurable");
    assert_int_equal(sink.errors, 3);
    p2s_source_release(&src);
    p2s_diag_sink_release(&sink);
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_suppress_filter_without_source_applies_selection_only(void **state)
{
    (void)state;
    P2sDiagSink sink;
    P2sRules rules;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    p2s_diag_sink_init(&sink);
    p2s_rules_load_default(&rules, &err);
    p2s_diag_emitf(&sink, P2S_NOTE, "P2S090", p2s_span(0, 0), "note");
    p2s_diag_emit_file(&sink, P2S_ERROR, "", "an I/O error has no code");
    p2s_rules_select(&rules, "P2S1", &err);
    p2s_suppress_filter(&sink, 0, NULL, &rules);
    assert_int_equal(sink.items.size, 1);
    assert_string_equal(sink.items.contents[0].message, "an I/O error has no code");
    assert_int_equal(sink.errors, 1);
    p2s_diag_sink_release(&sink);
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suppress_noqa_forms),
        cmocka_unit_test(test_suppress_filter_keeps_order_and_recounts_errors),
        cmocka_unit_test(test_suppress_filter_without_source_applies_selection_only),
    };
    return cmocka_run_group_tests_name("suppress", tests, NULL, NULL);
}
