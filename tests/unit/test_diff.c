/* Unit tests: unified diffs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "diff.h"

static void check_diff(const char *a, const char *b, const char *expected)
{
    P2sStrbuf out;
    p2s_strbuf_init(&out);
    p2s_diff_unified(a, strlen(a), b, strlen(b), "a.py", "b.py", &out);
    assert_string_equal(out.buf, expected);
    p2s_strbuf_release(&out);
}

static void test_diff_of_equal_texts_is_empty(void **state)
{
    (void)state;
    check_diff("x\ny\n", "x\ny\n", "");
}

static void test_diff_has_hunks_with_three_lines_of_context(void **state)
{
    (void)state;
    check_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n",
               "--- a.py\n+++ b.py\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
    check_diff("a\nb\n", "a\nb\nc\n", "--- a.py\n+++ b.py\n@@ -1,2 +1,3 @@\n a\n b\n+c\n");
    check_diff("", "new\n", "--- a.py\n+++ b.py\n@@ -0,0 +1 @@\n+new\n");
}

static void test_diff_splits_distant_changes_and_marks_missing_newline(void **state)
{
    (void)state;
    check_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve",
               "--- a.py\n+++ b.py\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n"
               "@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n\\ No newline at end of file\n+twelve\n\\ No newline at end of file\n");
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_of_equal_texts_is_empty),
        cmocka_unit_test(test_diff_has_hunks_with_three_lines_of_context),
        cmocka_unit_test(test_diff_splits_distant_changes_and_marks_missing_newline),
    };
    return cmocka_run_group_tests_name("diff", tests, NULL, NULL);
}
