/* Unit tests: which edits keep the language server's diagnostics (lsp_reuse.c), and that what is
 * kept is what a full analysis of the new text reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "lsp_reuse.h"
#include "lsp_text.h"
#include "rules.h"
#include "transpile.h"

static P2sRules rules;

#define TEXT \
    "import paddle\n" \
    "from paddle.autograd import PyLayer\n" \
    "\n" \
    "\n" \
    "class Twice(PyLayer):\n" \
    "    @staticmethod\n" \
    "    def forward(ctx, x):\n" \
    "        y = x * 2\n" \
    "        return y\n" \
    "\n" \
    "    @staticmethod\n" \
    "    def backward(ctx, dy):\n" \
    "        return dy * 2\n" \
    "\n" \
    "\n" \
    "def run(x):\n" \
    "    h = x + 1\n" \
    "    A = Twice\n" \
    "    M = A\n" \
    "    y = M.apply(h)\n" \
    "    k = y * 2\n" \
    "    return Twice.apply(k, 3)\n"

static void reuse__lint(P2sUnit *unit, const P2sSource *src, const TSTree *old, TSTree **keep)
{
    p2s_unit_init(unit, src);
    unit->lint_only = true;
    assert_int_equal(p2s_unit_reparse(unit, old, keep), P2S_TRANSPILE_OK);
    p2s_unit_find(unit, &rules, NULL);
    p2s_unit_finish(unit, &rules);
}

/* Analyzes TEXT (or source), then replaces `del` bytes at `skip` bytes into the first `needle`
 * by repl and asks whether the diagnostics can be kept; kept ones must equal a full analysis's. */
static bool reuse__kept_in(const char *source, const char *needle, size_t skip, size_t del, const char *repl)
{
    P2sSource old_src, new_src;
    P2sUnit old_unit, new_unit, full;
    P2sLspFacts facts = {0};
    P2sDiagSink kept;
    P2sStrbuf text;
    TSTree *tree = NULL;
    p2s_diag_sink_init(&kept);
    p2s_strbuf_init(&text);
    p2s_strbuf_adds(&text, source);
    p2s_source_view(&old_src, "x.py", source, strlen(source));
    reuse__lint(&old_unit, &old_src, NULL, &tree);
    p2s_lsp_facts_set(&facts, &old_unit.found);

    const char *at = strstr(source, needle);
    assert_non_null(at);
    size_t start = (size_t)(at - source) + skip;
    p2s_lsp_splice(&text, start, start + del, repl, strlen(repl), tree);
    p2s_source_view(&new_src, "x.py", text.buf, text.len);
    p2s_unit_init(&new_unit, &new_src);
    new_unit.lint_only = true;
    assert_int_equal(p2s_unit_reparse(&new_unit, tree, NULL), P2S_TRANSPILE_OK);
    P2sLspEdit edit = {source, strlen(source), old_unit.tree, &old_unit.sink, start, start + del, start + strlen(repl)};
    bool reused = p2s_lsp_reuse(&edit, &new_src, new_unit.tree, &facts, &kept);
    if (reused) {
        reuse__lint(&full, &new_src, NULL, NULL);
        assert_true(full.sink.items.size > 0);
        assert_true(p2s_lsp_same_diagnostics(&full.sink, &kept));
        p2s_unit_release(&full);
    } else {
        assert_int_equal(kept.items.size, 0);
    }
    p2s_unit_release(&new_unit);
    p2s_unit_release(&old_unit);
    ts_tree_delete(tree);
    p2s_lsp_facts_release(&facts);
    p2s_diag_sink_release(&kept);
    p2s_source_release(&new_src);
    p2s_source_release(&old_src);
    p2s_strbuf_release(&text);
    return reused;
}

static bool reuse__kept(const char *needle, size_t skip, size_t del, const char *repl)
{
    return reuse__kept_in(TEXT, needle, skip, del, repl);
}

static void test_lsp_reuse_keeps_a_renamed_local_shifted(void **state)
{
    (void)state;
    assert_true(reuse__kept("k = y * 2", 1, 0, "z"));         /* kz = y * 2: the P2S111 below moves */
    assert_true(reuse__kept("h = x + 1", 0, 1, "hh"));
    assert_true(reuse__kept("k = y * 2", 4, 1, "(y,\n         2)"));   /* a line added */
}

static void test_lsp_reuse_refuses_a_name_an_apply_resolves_through(void **state)
{
    (void)state;
    assert_false(reuse__kept("A = Twice", 4, 5, "paddle"));   /* M = A; M.apply: through the alias */
    assert_false(reuse__kept("M = A", 4, 1, "Twice"));
    assert_false(reuse__kept("h = x + 1", 0, 1, "Twice"));    /* binds a name that is resolved */
}

static void test_lsp_reuse_refuses_what_the_checker_reads(void **state)
{
    (void)state;
    assert_false(reuse__kept("y = x * 2", 0, 1, "w"));        /* forward's body */
    assert_false(reuse__kept("return dy * 2", 7, 0, "z"));    /* backward's */
    assert_false(reuse__kept("import paddle", 13, 0, "z"));   /* module level */
    assert_false(reuse__kept("    @staticmethod\n    def forward", 0, 0, "    w = 1\n"));   /* class body */
}

static void test_lsp_reuse_refuses_words_that_change_the_analysis(void **state)
{
    (void)state;
    assert_false(reuse__kept("k = y * 2", 9, 0, "  # noqa"));
    assert_false(reuse__kept("k = y * 2", 5, 0, ".apply"));
    assert_false(reuse__kept("k = y * 2", 4, 1, "lambda: y"));
    assert_false(reuse__kept("k = y * 2", 4, 1, "__import__('os')"));
}

/* Without a module-level import the runtime import would take a line of its own (P2S090), and
 * a use of Paddle's recompute in a function body decides whether it goes in. */
static void test_lsp_reuse_refuses_an_edit_that_may_add_the_runtime_import(void **state)
{
    (void)state;
    static const char source[] =
        "def run(layer, x):\n"
        "    from paddle.distributed import fleet\n"
        "    h = x + 1\n"
        "    return h\n";
    assert_false(reuse__kept_in(source, "h = x + 1", 4, 5, "fleet.utils.recompute(layer, x)"));
    assert_false(reuse__kept_in(source, "h = x + 1", 0, 1, "hh"));
}

int main(void)
{
    p2s_alloc_init();
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    if (p2s_rules_load_default(&rules, &err) < 0)
        return 1;
    p2s_strbuf_release(&err);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lsp_reuse_keeps_a_renamed_local_shifted),
        cmocka_unit_test(test_lsp_reuse_refuses_a_name_an_apply_resolves_through),
        cmocka_unit_test(test_lsp_reuse_refuses_what_the_checker_reads),
        cmocka_unit_test(test_lsp_reuse_refuses_words_that_change_the_analysis),
        cmocka_unit_test(test_lsp_reuse_refuses_an_edit_that_may_add_the_runtime_import),
    };
    int failed = cmocka_run_group_tests_name("lsp_reuse", tests, NULL, NULL);
    p2s_rules_release(&rules);
    return failed;
}
