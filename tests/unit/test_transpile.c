/* Unit tests: the pipeline of one source, and the verification of its output piece by piece. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "parse.h"
#include "plan.h"
#include "rules.h"
#include "transpile.h"

static P2sRules rules;

/* Text appended to the plan p2s_transpile builds, to break the output on purpose: linked with
 * -Wl,--wrap=p2s_plan_build (Makefile), so a test can check that the verification catches a
 * plan that emits code that does not parse. */
static const char *corrupt_edit;   /* appended to the first edit */
static const char *corrupt_tail;   /* appended to the generated tail */

__typeof__(p2s_plan_build) __real_p2s_plan_build, __wrap_p2s_plan_build;

int __wrap_p2s_plan_build(const P2sSource *src, const P2sFindings *found, const P2sRules *rules_,
                          bool with_tail, P2sDiagSink *sink, P2sPlan *out)
{
    int rc = __real_p2s_plan_build(src, found, rules_, with_tail, sink, out);
    if (rc == 0 && corrupt_edit && out->edits.size > 0) {
        P2sEdit *first = &out->edits.contents[0];
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_add(&text, first->text, strlen(first->text));
        p2s_strbuf_add(&text, corrupt_edit, strlen(corrupt_edit));
        p2s_free(first->text);
        first->text = p2s_strbuf_detach(&text, NULL);
    }
    if (rc == 0 && corrupt_tail)
        p2s_strbuf_add(&out->tail, corrupt_tail, strlen(corrupt_tail));
    return rc;
}

#define LAYER \
    "class L(PyLayer):\n" \
    "    @staticmethod\n" \
    "    def forward(ctx, x):\n" \
    "        return x\n" \
    "\n" \
    "    @staticmethod\n" \
    "    def backward(ctx, g):\n" \
    "        return g\n"

/* Transpiles text; the output must be made, changed, and parse cleanly as a whole, as the
 * verification (which parses only the pieces edits touched, and the tail) said it would. */
static void transpile__expect_clean(const char *text)
{
    P2sSource src;
    P2sDiagSink sink;
    P2sStrbuf out;
    bool changed = false;
    p2s_source_from_bytes(&src, "m.py", text, strlen(text));
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&out);
    P2sTranspileStatus status = p2s_transpile(&src, &rules, P2S_MODE_TRANSPILE, &sink, &out, &changed);
    if (status != P2S_TRANSPILE_OK)
        fail_msg("status %d for:\n%s\nfirst diagnostic: %s", (int)status, text,
                 sink.items.size ? sink.items.contents[0].message : "none");
    assert_true(changed);
    P2sSource whole;
    P2sDiagSink errors;
    p2s_source_view(&whole, "out.py", out.buf, out.len);
    p2s_diag_sink_init(&errors);
    ts_tree_delete(p2s_parse(&whole, &errors));
    assert_int_equal(errors.errors, 0);
    p2s_diag_sink_release(&errors);
    p2s_source_release(&whole);
    p2s_strbuf_release(&out);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
}

static void test_transpile_verifies_across_piece_boundaries(void **state)
{
    (void)state;
    static const char *const inputs[] = {
        /* sites in pieces after unedited ones, in compound statements, at module level */
        "import paddle\nfrom paddle.autograd import PyLayer\n\n" LAYER
        "\n\nx = 1\n\nif x:\n    y = L.apply(x)\nelse:\n    y = None\n\nz = L.apply(y)\n",
        /* a line continued into a top-level statement: no piece starts there */
        "from paddle.autograd import PyLayer\n" LAYER "a = 1 + \\\n2\nb = L.apply(a)\n",
        /* statements joined by `;`, and the file's last line without its newline */
        "from paddle.autograd import PyLayer\n" LAYER "a = 1; b = L.apply(a)\nc = L.apply(b)",
        /* a comment at column 0 inside a class body, between edited methods */
        "from paddle.autograd import PyLayer\n" LAYER
        "class M:\n    def f(self, x):\n        return L.apply(x)\n# a note\n    def g(self, x):\n        return L.apply(x)\n",
        /* CRLF line endings and a byte order mark */
        "\xEF\xBB\xBF" "from paddle.autograd import PyLayer\r\nclass L(PyLayer):\r\n    @staticmethod\r\n"
        "    def forward(ctx, x):\r\n        return x\r\n\r\n    @staticmethod\r\n    def backward(ctx, g):\r\n"
        "        return g\r\n\r\nf = L.apply\r\n",
        /* a decorated top-level function holding a site, and a string spanning lines before it */
        "from paddle.autograd import PyLayer\n" LAYER "s = '''\nnot code\n'''\n@staticmethod\ndef h(x):\n    return L.apply(x)\n",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        transpile__expect_clean(inputs[i]);
}

static void test_transpile_drops_the_tree_when_allowed_and_makes_the_same_output(void **state)
{
    (void)state;
    const char *text = "from paddle.autograd import PyLayer\n" LAYER "y = L.apply(1)\n";
    P2sSource src;
    p2s_source_from_bytes(&src, "m.py", text, strlen(text));
    P2sUnit kept, dropped;
    p2s_unit_init(&kept, &src);
    p2s_unit_init(&dropped, &src);
    dropped.drop_tree_when_verified = true;
    P2sUnit *units[] = {&kept, &dropped};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(p2s_unit_parse(units[i]), P2S_TRANSPILE_OK);
        p2s_unit_find(units[i], &rules, NULL);
        assert_int_equal(p2s_unit_finish(units[i], &rules), P2S_TRANSPILE_OK);
    }
    assert_non_null(kept.tree);
    assert_null(dropped.tree);
    assert_true(kept.changed && dropped.changed);
    assert_string_equal(kept.out.buf, dropped.out.buf);
    p2s_unit_release(&kept);
    p2s_unit_release(&dropped);
    p2s_source_release(&src);
}

static void test_transpile_lint_only_reports_without_an_output(void **state)
{
    (void)state;
    const char *text = "from paddle.autograd import PyLayer\n" LAYER "y = L.apply(1, 2)\n";
    P2sSource src;
    p2s_source_from_bytes(&src, "m.py", text, strlen(text));
    P2sUnit unit;
    p2s_unit_init(&unit, &src);
    unit.lint_only = true;
    assert_int_equal(p2s_unit_parse(&unit), P2S_TRANSPILE_OK);
    p2s_unit_find(&unit, &rules, NULL);
    assert_int_equal(p2s_unit_finish(&unit, &rules), P2S_TRANSPILE_CONTRACT_ERROR);
    assert_int_equal(unit.out.len, 0);
    assert_false(unit.changed);
    bool p2s111 = false;
    for (size_t i = 0; i < unit.sink.items.size; i++)
        p2s111 = p2s111 || strcmp(unit.sink.items.contents[i].code, "P2S111") == 0;
    assert_true(p2s111);
    p2s_unit_release(&unit);
    p2s_source_release(&src);
}

/* A plan whose output does not parse (here broken on purpose) is an internal error, P2S900,
 * and no output: in an edited piece and in the generated tail alike. */
static void transpile__expect_caught(const char *edit, const char *tail)
{
    const char *text = "from paddle.autograd import PyLayer\n" LAYER "\nx = 1\n\ny = L.apply(x)\n\nz = 2\n";
    P2sSource src;
    P2sDiagSink sink;
    P2sStrbuf out;
    bool changed = true;
    corrupt_edit = edit;
    corrupt_tail = tail;
    p2s_source_from_bytes(&src, "m.py", text, strlen(text));
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&out);
    assert_int_equal(p2s_transpile(&src, &rules, P2S_MODE_TRANSPILE, &sink, &out, &changed),
                     P2S_TRANSPILE_INTERNAL_ERROR);
    corrupt_edit = corrupt_tail = NULL;
    assert_false(changed);
    assert_int_equal(out.len, 0);
    assert_true(sink.items.size > 0);
    const P2sDiag *last = &sink.items.contents[sink.items.size - 1];
    assert_string_equal(last->code, "P2S900");
    assert_non_null(strstr(last->message, "does not parse"));
    p2s_strbuf_release(&out);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
}

static void test_transpile_verification_catches_an_output_that_does_not_parse(void **state)
{
    (void)state;
    transpile__expect_caught("(", NULL);            /* a bracket left open in an edit */
    transpile__expect_caught(" if:", NULL);         /* a bad statement in an edit */
    transpile__expect_caught(NULL, "\ndef (:\n");  /* the generated tail */
    transpile__expect_caught(NULL, "\nb = [1,\n");  /* a bracket the tail leaves open */
}

static void test_parse_kind_by_grammar_symbol(void **state)
{
    (void)state;
    const char *text = "f(x)\n";
    P2sSource src;
    P2sDiagSink sink;
    p2s_source_from_bytes(&src, "m.py", text, strlen(text));
    p2s_diag_sink_init(&sink);
    TSTree *tree = p2s_parse(&src, &sink);
    TSNode call = ts_node_named_child(ts_node_named_child(ts_tree_root_node(tree), 0), 0);
    assert_int_equal(p2s_kind(call), P2S_KIND_CALL);
    assert_int_equal(p2s_kind(p2s_child(call, P2S_FIELD_FUNCTION)), P2S_KIND_IDENTIFIER);
    assert_int_equal(p2s_kind(p2s_child(call, P2S_FIELD_ARGUMENTS)), P2S_KIND_ARGUMENT_LIST);
    assert_int_equal(p2s_kind(ts_tree_root_node(tree)), P2S_KIND_OTHER);   /* module: not listed */
    assert_int_equal(p2s_kind((TSNode){0}), P2S_KIND_OTHER);
    ts_tree_delete(tree);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
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
        cmocka_unit_test(test_transpile_verifies_across_piece_boundaries),
        cmocka_unit_test(test_transpile_drops_the_tree_when_allowed_and_makes_the_same_output),
        cmocka_unit_test(test_transpile_lint_only_reports_without_an_output),
        cmocka_unit_test(test_transpile_verification_catches_an_output_that_does_not_parse),
        cmocka_unit_test(test_parse_kind_by_grammar_symbol),
    };
    int failed = cmocka_run_group_tests_name("transpile", tests, NULL, NULL);
    p2s_rules_release(&rules);
    return failed;
}
