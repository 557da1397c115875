/* Unit tests: strbuf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "strbuf.h"

static void test_strbuf_is_empty_and_terminated_after_init(void **state)
{
    (void)state;
    P2sStrbuf b;
    p2s_strbuf_init(&b);
    assert_non_null(b.buf);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.buf, "");
    p2s_strbuf_release(&b);
}

static void test_strbuf_keeps_nul_bytes_and_grows(void **state)
{
    (void)state;
    P2sStrbuf b;
    p2s_strbuf_init(&b);
    for (int i = 0; i < 1000; i++)
        p2s_strbuf_add(&b, "a\0b", 3);
    assert_int_equal(b.len, 3000);
    assert_memory_equal(b.buf + 2997, "a\0b", 3);
    assert_int_equal(b.buf[3000], '\0');
    p2s_strbuf_release(&b);
}

static void test_strbuf_addf_formats(void **state)
{
    (void)state;
    P2sStrbuf b;
    p2s_strbuf_init(&b);
    p2s_strbuf_addf(&b, "%s:%d", "x.py", 12);
    p2s_strbuf_addf(&b, "%s", "");
    assert_string_equal(b.buf, "x.py:12");
    p2s_strbuf_release(&b);
}

static void test_strbuf_detach_hands_over_and_resets(void **state)
{
    (void)state;
    P2sStrbuf b;
    size_t len;
    p2s_strbuf_init(&b);
    char *empty = p2s_strbuf_detach(&b, &len);
    assert_int_equal(len, 0);
    assert_string_equal(empty, "");
    p2s_free(empty);
    p2s_strbuf_adds(&b, "hello");
    char *s = p2s_strbuf_detach(&b, &len);
    assert_string_equal(s, "hello");
    assert_int_equal(len, 5);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.buf, "");
    p2s_free(s);
    p2s_strbuf_release(&b);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strbuf_is_empty_and_terminated_after_init),
        cmocka_unit_test(test_strbuf_keeps_nul_bytes_and_grows),
        cmocka_unit_test(test_strbuf_addf_formats),
        cmocka_unit_test(test_strbuf_detach_hands_over_and_resets),
    };
    return cmocka_run_group_tests_name("strbuf", tests, NULL, NULL);
}
