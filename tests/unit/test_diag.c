/* Unit tests: the diagnostic sink and its text and JSON printers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "diag_json.h"
#include "diag_text.h"

static void test_diag_text_has_location_source_line_and_caret(void **state)
{
    (void)state;
    const char text[] = "x = 1\n\tcall(\xC3\xA9, bad)\n";
    P2sSource src;
    P2sDiagSink sink;
    P2sStrbuf out;
    p2s_source_from_bytes(&src, "m.py", text, sizeof text - 1);
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&out);
    /* "bad" starts after a tab, "call(", a 2-byte é and ", " */
    size_t start = 6 + 1 + 5 + 2 + 2;
    P2sDiag *d = p2s_diag_emitf(&sink, P2S_WARNING, "P2S201", p2s_span(start, start + 3), "bad %s", "thing");
    p2s_diag_set_fix(d, "do better");
    p2s_diag_text_format(&src, d, false, &out);
    assert_string_equal(out.buf,
                        "m.py:2:10: warning[P2S201]: bad thing\n"
                        "    \tcall(\xC3\xA9, bad)\n"
                        "    \t        ^~~\n"
                        "  = help: do better\n");
    assert_int_equal(sink.errors, 0);
    p2s_strbuf_release(&out);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
}

static void test_diag_counts_errors_only(void **state)
{
    (void)state;
    P2sDiagSink sink;
    p2s_diag_sink_init(&sink);
    p2s_diag_emitf(&sink, P2S_NOTE, "P2S090", p2s_span(0, 0), "n");
    p2s_diag_emitf(&sink, P2S_ERROR, "P2S001", p2s_span(0, 1), "e");
    p2s_diag_emit_file(&sink, P2S_ERROR, "", "io");
    assert_int_equal(sink.errors, 2);
    assert_int_equal(sink.items.size, 3);
    assert_false(sink.items.contents[2].has_span);
    p2s_diag_sink_release(&sink);
}

static bool is_note(const P2sDiag *d, const void *ctx)
{
    (void)ctx;
    return d->severity == P2S_NOTE;
}

/* Diagnostics change hands through the sink's functions, and its error count follows. */
static void test_diag_sink_keeps_its_count_through_append_move_truncate_remove(void **state)
{
    (void)state;
    P2sDiagSink a, b;
    p2s_diag_sink_init(&a);
    p2s_diag_sink_init(&b);
    p2s_diag_emitf(&a, P2S_ERROR, "P2S105", p2s_span(0, 1), "e1");
    p2s_diag_emitf(&a, P2S_NOTE, "P2S301", p2s_span(0, 1), "n1");
    p2s_diag_emitf(&b, P2S_ERROR, "P2S106", p2s_span(2, 3), "e2");
    P2sDiag kept = {P2S_ERROR, "P2S107", true, {4, 5}, p2s_strdup("e3"), NULL};
    p2s_diag_sink_append(&b, kept);
    p2s_diag_emitf(&b, P2S_NOTE, "P2S300", p2s_span(6, 7), "n2");
    assert_int_equal(b.errors, 2);

    p2s_diag_sink_move(&a, &b);
    assert_int_equal(b.items.size, 0);
    assert_int_equal(b.errors, 0);
    assert_int_equal(a.items.size, 5);
    assert_int_equal(a.errors, 3);

    p2s_diag_sink_remove_if(&a, 1, is_note, NULL);
    assert_int_equal(a.items.size, 3);
    assert_int_equal(a.errors, 3);
    assert_string_equal(a.items.contents[1].message, "e2");
    assert_string_equal(a.items.contents[2].message, "e3");

    p2s_diag_sink_truncate(&a, 1);
    assert_int_equal(a.items.size, 1);
    assert_int_equal(a.errors, 1);
    p2s_diag_sink_truncate(&a, 5);
    assert_int_equal(a.items.size, 1);
    p2s_diag_sink_release(&a);
    p2s_diag_sink_release(&b);
}

static void test_diag_json_has_ruff_shape(void **state)
{
    (void)state;
    const char text[] = "ab\ncd\n";
    P2sSource src;
    P2sDiagSink sink;
    p2s_source_from_bytes(&src, "m.py", text, sizeof text - 1);
    p2s_diag_sink_init(&sink);
    p2s_diag_emitf(&sink, P2S_ERROR, "P2S001", p2s_span(1, 4), "oops");
    cJSON *array = cJSON_CreateArray();
    p2s_diag_json_add(array, "m.py", &src, &sink.items.contents[0]);
    char *json = cJSON_PrintUnformatted(array);
    assert_string_equal(json, "[{\"file\":\"m.py\",\"line\":1,\"col\":2,\"end_line\":2,\"end_col\":2,"
                              "\"severity\":\"error\",\"code\":\"P2S001\",\"message\":\"oops\",\"fix\":null}]");
    p2s_free(json);
    cJSON_Delete(array);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diag_text_has_location_source_line_and_caret),
        cmocka_unit_test(test_diag_counts_errors_only),
        cmocka_unit_test(test_diag_sink_keeps_its_count_through_append_move_truncate_remove),
        cmocka_unit_test(test_diag_json_has_ruff_shape),
    };
    return cmocka_run_group_tests_name("diag", tests, NULL, NULL);
}
