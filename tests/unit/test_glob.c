/* Unit tests: glob patterns and .gitignore rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "glob.h"

static void test_glob_matches_components_classes_and_double_star(void **state)
{
    (void)state;
    static const struct { const char *pattern, *path; bool match; } cases[] = {
        {"*.py", "a.py", true}, {"*.py", "d/a.py", false}, {"a?c", "abc", true}, {"a?c", "a/c", false},
        {"[ab]x", "bx", true}, {"[!ab]x", "bx", false}, {"[a-c]", "b", true}, {"**/gen_*.py", "x/y/gen_1.py", true},
        {"**/gen_*.py", "gen_1.py", true}, {"build/**", "build/a/b", true}, {"a/**/b", "a/b", true},
        {"a/**/b", "a/x/y/b", true}, {"a/**/b", "a/x/y/c", false}, {"\\*", "*", true}, {"", "", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (p2s_glob_match(cases[i].pattern, cases[i].path) != cases[i].match)
            fail_msg("'%s' vs '%s': expected %d", cases[i].pattern, cases[i].path, cases[i].match);
}

static void test_ignore_rules_follow_gitignore(void **state)
{
    (void)state;
    P2sIgnoreRules rules = {0};
    const char root[] = "# comment\n*.log\n!keep.log\nbuild/\n/top.py\ndocs/*.md\n";
    p2s_ignore_add(&rules, "", root, sizeof root - 1);
    assert_true(p2s_ignore_match(&rules, "x/a.log", false));
    assert_false(p2s_ignore_match(&rules, "x/keep.log", false));
    assert_true(p2s_ignore_match(&rules, "build", true));
    assert_false(p2s_ignore_match(&rules, "build", false));  /* a file named build stays */
    assert_true(p2s_ignore_match(&rules, "top.py", false));
    assert_false(p2s_ignore_match(&rules, "sub/top.py", false));
    assert_true(p2s_ignore_match(&rules, "docs/a.md", false));
    size_t before = rules.size;
    const char sub[] = "local.py\r\n";
    p2s_ignore_add(&rules, "pkg", sub, sizeof sub - 1);
    assert_true(p2s_ignore_match(&rules, "pkg/local.py", false));
    assert_false(p2s_ignore_match(&rules, "other/local.py", false));
    p2s_ignore_truncate(&rules, before);
    assert_false(p2s_ignore_match(&rules, "pkg/local.py", false));
    p2s_ignore_release(&rules);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob_matches_components_classes_and_double_star),
        cmocka_unit_test(test_ignore_rules_follow_gitignore),
    };
    return cmocka_run_group_tests_name("glob", tests, NULL, NULL);
}
