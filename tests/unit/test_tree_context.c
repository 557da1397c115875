/* Unit tests: a lone file's context (p2s_tree_context): which sibling modules it reads, and
 * that the file's own tree, when given, serves instead of a second parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "cli.h"
#include "project.h"
#include "rules.h"
#include "transpile.h"
#include "tree_context.h"

static P2sRules rules;
static char root[] = "/tmp/p2s-test-tree-XXXXXX";

#define PYLAYER_BODY "(PyLayer):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n" \
                     "    @staticmethod\n    def backward(ctx, dy):\n        return dy\n"

/* pkg.base defines L; pkg.mid defines M and re-exports L as Again; the users read one or the
 * other of mid's names. */
static const char *const files[][2] = {
    {"pyproject.toml", "[project]\nname = \"pkg\"\n"},
    {"pkg/__init__.py", ""},
    {"pkg/base.py", "from paddle.autograd import PyLayer\n\n\nclass L" PYLAYER_BODY},
    {"pkg/mid.py", "from paddle.autograd import PyLayer\nfrom pkg.base import L as Again\n\n\nclass M" PYLAYER_BODY},
    {"pkg/use_local.py", "from pkg.mid import M\n\n\ndef f(x):\n    return M.apply(x)\n"},
    {"pkg/use_reexport.py", "from pkg.mid import Again\n\n\ndef f(x):\n    return Again.apply(x)\n"},
};

static char *path_of(const char *rel)
{
    P2sStrbuf s;
    p2s_strbuf_init(&s);
    p2s_strbuf_addf(&s, "%s/%s", root, rel);
    return p2s_strbuf_detach(&s, NULL);
}

static int setup(void **state)
{
    (void)state;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    assert_int_equal(p2s_rules_load_default(&rules, &err), 0);
    p2s_strbuf_release(&err);
    assert_non_null(mkdtemp(root));
    char *pkg = path_of("pkg");
    assert_int_equal(mkdir(pkg, 0777), 0);
    p2s_free(pkg);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *path = path_of(files[i][0]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[i][1], f);
        fclose(f);
        p2s_free(path);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *path = path_of(files[i][0]);
        unlink(path);
        p2s_free(path);
    }
    char *pkg = path_of("pkg");
    rmdir(pkg);
    p2s_free(pkg);
    rmdir(root);
    p2s_rules_release(&rules);
    return 0;
}

typedef struct {
    size_t siblings;
    bool knows[3];          /* pkg.mid.M, pkg.mid.Again, pkg.base.L */
} Reached;

/* Runs rel's context as the CLI does: parse, place, read the siblings (with the file's tree
 * given, or parsed again). */
static Reached context_of(const char *rel, bool give_tree)
{
    static const char *const names[] = {"pkg.mid.M", "pkg.mid.Again", "pkg.base.L"};
    char *path = path_of(rel);
    P2sOptions opts;
    memset(&opts, 0, sizeof opts);
    opts.jobs = 1;
    P2sProject project;
    p2s_project_init(&project, root, NULL);
    P2sSource src;
    P2sDiagSink io;
    p2s_diag_sink_init(&io);
    assert_int_equal(p2s_source_read_path(&src, path, path, P2S_SOURCE_LIMIT, &io), 0);
    P2sUnit unit;
    p2s_unit_init(&unit, &src);
    assert_int_equal(p2s_unit_parse(&unit), P2S_TRANSPILE_OK);
    P2sTreeContext ctx;
    p2s_tree_context_place(&project, path, &ctx);
    p2s_tree_context(&opts, &rules, &project, path, unit.src, give_tree ? unit.tree : NULL, &ctx);
    Reached r = {ctx.siblings, {false, false, false}};
    for (size_t i = 0; i < 3; i++)
        r.knows[i] = p2s_externals_get(&ctx.external, names[i], strlen(names[i])) != NULL;
    assert_non_null(unit.tree);  /* the caller's tree is copied, not taken */
    p2s_tree_context_release(&ctx);
    p2s_unit_release(&unit);
    p2s_source_release(&src);
    p2s_diag_sink_release(&io);
    p2s_project_release(&project);
    p2s_free(path);
    return r;
}

static void test_tree_context_reads_no_reexport_nothing_reads(void **state)
{
    (void)state;
    for (int give = 0; give < 2; give++) {
        Reached r = context_of("pkg/use_local.py", give);
        assert_int_equal(r.siblings, 2);  /* pkg and pkg.mid: nothing reads mid's Again */
        assert_true(r.knows[0]);
        assert_false(r.knows[1]);
        assert_false(r.knows[2]);
    }
}

static void test_tree_context_follows_a_reexport_it_reads(void **state)
{
    (void)state;
    for (int give = 0; give < 2; give++) {
        Reached r = context_of("pkg/use_reexport.py", give);
        assert_int_equal(r.siblings, 3);  /* and pkg.base, for the Again it reads */
        assert_true(r.knows[1]);
        assert_true(r.knows[2]);
    }
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_context_reads_no_reexport_nothing_reads),
        cmocka_unit_test(test_tree_context_follows_a_reexport_it_reads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
