/* Unit tests: the one walk of a source tree (p2s_walk), as tree mode and the workspace index
 * see it: which files it finds, in which order, and what it skips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "walk.h"

static char root[] = "/tmp/p2s-test-walk-XXXXXX";

/* Directories (parents before children), then files and links. */
static const char *const dirs[] = {".git", "__pycache__", "build", "excluded", "other", "out", "sub"};
static const char *const files[][2] = {
    {".gitignore", "ignored.py\nbuild/\n"},
    {"b.py", "b = 1\n"},
    {"a.py", "a = 1\n"},
    {"c.txt", "text\n"},
    {"x.pyc", ""},
    {"ignored.py", ""},
    {"build/gen.py", ""},
    {".git/config", ""},
    {"__pycache__/m.py", ""},
    {"excluded/e.py", ""},
    {"other/local.py", ""},
    {"out/written.py", ""},
    {"sub/.gitignore", "local.py\n"},
    {"sub/d.py", ""},
    {"sub/local.py", ""},
};
static const char *const links[][2] = {{"link_file.py", "a.py"}, {"link_dir", "sub"}};

static char *path_of(const char *rel)
{
    return p2s_walk_join(root, rel);
}

/* Makes rel below root: a link to link_to, else a file holding text, else a directory. */
static void make(const char *rel, const char *text, const char *link_to)
{
    char *path = path_of(rel);
    if (link_to) {
        assert_int_equal(symlink(link_to, path), 0);
    } else if (!text) {
        assert_int_equal(mkdir(path, 0777), 0);
    } else {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0 && fclose(f) == 0);
    }
    p2s_free(path);
}

static int setup(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(root));
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        make(dirs[i], NULL, NULL);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        make(files[i][0], files[i][1], NULL);
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        make(links[i][0], NULL, links[i][1]);
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes root and all below it, deepest first, links themselves (not what they point to). */
static int teardown(void **state)
{
    (void)state;
    return nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_walk_finds_files_sorted_and_skips_what_the_policy_skips(void **state)
{
    (void)state;
    static const char *const expected[] = {
        ".gitignore", "a.py", "b.py", "c.txt", "link_file.py", "other/local.py", "sub/.gitignore", "sub/d.py",
    };
    const char *exclude = "excluded";
    P2sStringList excludes = {0};
    array_push(&excludes, exclude);
    char *out = path_of("out");
    struct stat out_stat;
    assert_int_equal(stat(out, &out_stat), 0);
    P2sWalkEntries found = {0};
    p2s_walk(root, &excludes, &out_stat, &found);
    for (size_t i = 0; i < found.size && i < sizeof expected / sizeof expected[0]; i++)
        assert_string_equal(found.contents[i].rel, expected[i]);
    assert_int_equal(found.size, sizeof expected / sizeof expected[0]);
    for (size_t i = 0; i < found.size; i++) {
        const P2sWalkEntry *e = &found.contents[i];
        size_t n = strlen(e->rel);
        assert_null(e->error);
        assert_int_equal(e->python, n > 3 && strcmp(e->rel + n - 3, ".py") == 0);
        if (strcmp(e->rel, "link_file.py") == 0)
            assert_int_equal(e->size, 6);  /* the size of the file it links to */
    }
    p2s_walk_release(&found);
    array_delete(&excludes);
    p2s_free(out);
}

static void test_walk_excluded_by_policy_globs_and_ignore_rules(void **state)
{
    (void)state;
    const char *globs[] = {"gen/*.py", "*_pb2.py"};
    P2sStringList excludes = {0};
    for (size_t i = 0; i < 2; i++)
        array_push(&excludes, globs[i]);
    assert_true(p2s_walk_excluded(NULL, NULL, "pkg/.git", true));
    assert_true(p2s_walk_excluded(NULL, NULL, "__pycache__", true));
    assert_false(p2s_walk_excluded(NULL, NULL, "__pycache__", false));
    assert_true(p2s_walk_excluded(NULL, NULL, "pkg/m.pyc", false));
    assert_true(p2s_walk_excluded(&excludes, NULL, "gen/a.py", false));
    assert_false(p2s_walk_excluded(&excludes, NULL, "pkg/gen/a.py", false));  /* a glob with `/`: the path */
    assert_true(p2s_walk_excluded(&excludes, NULL, "pkg/m_pb2.py", false));   /* one without: the name */
    assert_false(p2s_walk_excluded(&excludes, NULL, "pkg/m.py", false));
    P2sIgnoreRules ignore = {0};
    const char rules[] = "skip.py\n";
    p2s_ignore_add(&ignore, "", rules, sizeof rules - 1);
    assert_true(p2s_walk_excluded(NULL, &ignore, "skip.py", false));
    assert_false(p2s_walk_excluded(NULL, &ignore, "keep.py", false));
    p2s_ignore_release(&ignore);
    array_delete(&excludes);
}

static void test_walk_join_leaves_out_an_empty_side(void **state)
{
    (void)state;
    static const char *const cases[][3] = {{"a", "b", "a/b"}, {"", "b", "b"}, {"a", "", "a"}, {"", "", ""}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *joined = p2s_walk_join(cases[i][0], cases[i][1]);
        assert_string_equal(joined, cases[i][2]);
        p2s_free(joined);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_finds_files_sorted_and_skips_what_the_policy_skips),
        cmocka_unit_test(test_walk_excluded_by_policy_globs_and_ignore_rules),
        cmocka_unit_test(test_walk_join_leaves_out_an_empty_side),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
