/* Unit tests: edit plans and emission. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "emit.h"
#include "plan.h"

static void test_plan_rejects_overlapping_edits(void **state)
{
    (void)state;
    P2sPlan plan;
    P2sDiagSink sink;
    p2s_plan_init(&plan);
    p2s_diag_sink_init(&sink);
    p2s_plan_add(&plan, 4, 9, "x", 1);
    p2s_plan_add(&plan, 2, 5, "y", 1);
    assert_int_equal(p2s_plan_finish(&plan, &sink), -1);
    assert_string_equal(sink.items.contents[0].code, "P2S900");
    p2s_plan_release(&plan);
    p2s_diag_sink_release(&sink);
}

static void test_plan_orders_insertion_before_replacement_at_same_offset(void **state)
{
    (void)state;
    const char text[] = "abcdef";
    P2sSource src;
    P2sPlan plan;
    P2sDiagSink sink;
    P2sStrbuf out;
    p2s_source_from_bytes(&src, "m.py", text, 6);
    p2s_plan_init(&plan);
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&out);
    p2s_plan_add(&plan, 2, 4, "XY", 2);
    p2s_plan_add(&plan, 2, 2, "<", 1);
    p2s_plan_add(&plan, 6, 6, "!", 1);
    assert_int_equal(p2s_plan_finish(&plan, &sink), 0);
    p2s_strbuf_adds(&plan.tail, "\n# tail\n");
    p2s_emit(&src, &plan, &out);
    assert_string_equal(out.buf, "ab<XYef!\n# tail\n");
    p2s_strbuf_release(&out);
    p2s_plan_release(&plan);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
}

static void test_plan_rejects_two_insertions_at_one_offset(void **state)
{
    (void)state;
    P2sPlan plan;
    P2sDiagSink sink;
    p2s_plan_init(&plan);
    p2s_diag_sink_init(&sink);
    p2s_plan_add(&plan, 3, 3, "a", 1);
    p2s_plan_add(&plan, 3, 3, "b", 1);
    assert_int_equal(p2s_plan_finish(&plan, &sink), -1);
    p2s_plan_release(&plan);
    p2s_diag_sink_release(&sink);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_rejects_overlapping_edits),
        cmocka_unit_test(test_plan_orders_insertion_before_replacement_at_same_offset),
        cmocka_unit_test(test_plan_rejects_two_insertions_at_one_offset),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
