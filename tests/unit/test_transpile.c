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
static const char *corrupt_edit;   /* appended to the first edit (the last, with corrupt_last) */
static bool corrupt_last;
static const char *corrupt_tail;   /* appended to the generated tail */
static size_t corrupt_builder;     /* 1 + the index of a builder whose last byte becomes '(' */

__typeof__(p2s_plan_build) __real_p2s_plan_build, __wrap_p2s_plan_build;

P2sPlanStatus __wrap_p2s_plan_build(const P2sSource *src, const P2sFindings *found, const P2sRules *rules_,
                                    bool with_tail, P2sDiagSink *sink, P2sPlan *out)
{
    P2sPlanStatus status = __real_p2s_plan_build(src, found, rules_, with_tail, sink, out);
    if (status == P2S_PLAN_MADE && corrupt_edit && out->edits.size > 0) {
        P2sEdit *first = &out->edits.contents[corrupt_last ? out->edits.size - 1 : 0];
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_add(&text, first->text, strlen(first->text));
        p2s_strbuf_add(&text, corrupt_edit, strlen(corrupt_edit));
        p2s_free(first->text);
        first->text = p2s_strbuf_detach(&text, NULL);
    }
    if (status == P2S_PLAN_MADE && corrupt_tail)
        p2s_strbuf_add(&out->tail, corrupt_tail, strlen(corrupt_tail));
    if (status == P2S_PLAN_MADE && corrupt_builder && corrupt_builder <= out->builders.size) {
        const P2sBuilder *b = &out->builders.contents[corrupt_builder - 1];
        out->tail.buf[b->at + b->len - 2] = '(';   /* `backward=L.backward(` and its newline */
    }
    return status;
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
    P2sTranspileStatus status = p2s_transpile(&src, &rules, &sink, &out, &changed);
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
        /* sites in the methods of a class followed by other code (verified method by method):
         * a docstring first, a decorated method, a string at column 0 inside a method, a nested
         * class, a comment at column 0 last, statements joined by `;` in the class body */
        "from paddle.autograd import PyLayer\n" LAYER "class M:\n    \"\"\"doc\"\"\"\n    a = 1; b = L.apply(a)\n"
        "    @property\n    def p(self):\n        return L.apply(1)\n    def q(self, x):\n        s = '''\nx\n'''\n"
        "        return L.apply(x)\n    class N:\n        def r(self):\n            return L.apply(2)\n# last\nz = 1\n",
        /* a method split statement by statement: a site in an `if` with an `else`, a comment at
         * column 0 inside the method, a statement joined by `;` to a site, a one-line method
         * (one piece), a method of a nested class, the class followed by a decorated one */
        "from paddle.autograd import PyLayer\n" LAYER "class M:\n    def f(self, x):\n        \"\"\"doc\"\"\"\n"
        "        if x:\n            y = L.apply(x)\n        else:\n            y = 2\n# note\n"
        "        a = 1; b = L.apply(y)\n        return L.apply(b)\n\n    def g(self, x): return L.apply(x)\n\n"
        "    class N:\n        def h(self, x):\n            z = 1\n            return L.apply(x)\n"
        "@staticmethod\nclass P:\n    def k(self):\n        return L.apply(1)\nq = 2\n",
        /* tabs for indentation, a function's statements, a one-line class, a site in a decorator
         * (the definition is then one piece) */
        "from paddle.autograd import PyLayer\n" LAYER "class T:\n\tdef f(self, x):\n\t\treturn L.apply(x)\n"
        "def g(x):\n    y = L.apply(x)\n    return y\nclass O: w = L.apply(1)\n"
        "@L.apply\ndef h():\n    return L.apply(3)\nz = 1\n",
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

/* Transpiles text with the corruption the caller set (corrupt_*, cleared here): an internal
 * error, P2S900 "does not parse" (at `where`, when given), and no output. */
static void transpile__expect_p2s900(const char *text, const char *where)
{
    P2sSource src;
    P2sDiagSink sink;
    P2sStrbuf out;
    bool changed = true;
    p2s_source_from_bytes(&src, "m.py", text, strlen(text));
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&out);
    P2sTranspileStatus status = p2s_transpile(&src, &rules, &sink, &out, &changed);
    corrupt_edit = corrupt_tail = NULL;
    corrupt_last = false;
    corrupt_builder = 0;
    if (status != P2S_TRANSPILE_INTERNAL_ERROR)
        fail_msg("status %d for:\n%s", (int)status, text);
    assert_false(changed);
    assert_int_equal(out.len, 0);
    assert_true(sink.items.size > 0);
    const P2sDiag *last = &sink.items.contents[sink.items.size - 1];
    assert_string_equal(last->code, "P2S900");
    assert_non_null(strstr(last->message, "does not parse"));
    if (where && !strstr(last->message, where))
        fail_msg("not at %s: %s", where, last->message);
    p2s_strbuf_release(&out);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
}

/* A plan whose output does not parse (here broken on purpose) is an internal error, P2S900,
 * and no output: in an edited piece and in the generated tail alike. */
static void transpile__expect_caught(const char *edit, const char *tail)
{
    corrupt_edit = edit;
    corrupt_tail = tail;
    transpile__expect_p2s900("from paddle.autograd import PyLayer\n" LAYER "\nx = 1\n\ny = L.apply(x)\n\nz = 2\n", NULL);
}

static void test_transpile_verification_catches_an_output_that_does_not_parse(void **state)
{
    (void)state;
    transpile__expect_caught("(", NULL);            /* a bracket left open in an edit */
    transpile__expect_caught(" if:", NULL);         /* a bad statement in an edit */
    transpile__expect_caught(NULL, "\ndef (:\n");  /* the generated tail */
    transpile__expect_caught(NULL, "\nb = [1,\n");  /* a bracket the tail leaves open */
}

/* A site in a method is verified with its method alone (a nested piece): an edit that breaks
 * it, or the lines after it, is caught there, at its line in the whole output. */
static void test_transpile_verification_catches_a_broken_method(void **state)
{
    (void)state;
    static const char *const breaks[] = {"(", "\n  x = 1", "\n)"};
    static const char *const at[] = {"output line 13:9", "output line 14:", "output line 13:9"};
    for (size_t i = 0; i < sizeof breaks / sizeof breaks[0]; i++) {
        corrupt_edit = breaks[i];
        corrupt_last = true;
        transpile__expect_p2s900("from paddle.autograd import PyLayer\n" LAYER "\nclass M:\n    def f(self, x):\n"
                                 "        return L.apply(x)\n\n    def g(self):\n        return 1\n\nz = 2\n", at[i]);
    }
}

#define SAME_SHAPE(name) \
    "class " name "(PyLayer):\n    @staticmethod\n    def forward(ctx, x, *, k=1):\n        return x\n\n" \
    "    @staticmethod\n    def backward(ctx, g):\n        return g\n\n\n"

/* The tail is verified by shape (a builder like one parsed already, but for its plain name,
 * is not parsed again): a builder that is not its shape with its name, byte for byte, is
 * parsed, and caught; as is one whose name is not plain, and one the shape's first, parsed,
 * builder. */
static void test_transpile_verification_by_shape_catches_a_builder_unlike_its_shape(void **state)
{
    (void)state;
    const char *text = "from paddle.autograd import PyLayer\n\n\n" SAME_SHAPE("A") SAME_SHAPE("match")
                       SAME_SHAPE("B") SAME_SHAPE("C") "y = C.apply(B.apply(A.apply(1)))\n";
    transpile__expect_clean(text);
    for (size_t builder = 1; builder <= 4; builder++) {
        corrupt_builder = builder;
        transpile__expect_p2s900(text, NULL);
    }
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

/* The CLI's pipeline for a lone file (a unit that regenerates a file ending in the marker):
 * the status; the output in *out and the diagnostics in *sink (caller releases both). */
static P2sTranspileStatus transpile__run(const char *text, P2sStrbuf *out, bool *changed, P2sDiagSink *sink)
{
    P2sSource src;
    P2sUnit unit;
    p2s_source_from_bytes(&src, "m.py", text, strlen(text));
    p2s_unit_init(&unit, &src);
    unit.regenerate = true;
    p2s_strbuf_init(out);
    P2sTranspileStatus status = p2s_unit_parse(&unit);
    if (status == P2S_TRANSPILE_OK) {
        p2s_unit_find(&unit, &rules, NULL);
        status = p2s_unit_finish(&unit, &rules);
        p2s_strbuf_add(out, unit.out.buf, unit.out.len);
        *changed = unit.changed;
    }
    *sink = unit.sink;
    p2s_diag_sink_init(&unit.sink);
    p2s_unit_release(&unit);
    p2s_source_release(&src);
    return status;
}

/* The output of every rewrite shape, transpiled again, comes back byte for byte: the tool
 * recognises its own rewrites, undoes them and makes them again. */
static void test_transpile_regenerates_its_own_output_identically(void **state)
{
    (void)state;
    static const char *const inputs[] = {
        "from paddle.autograd import PyLayer\n" LAYER "\ny = L.apply(1)\nf = L.apply\n",
        "from paddle.autograd import PyLayer\n\n\nclass K(PyLayer):\n    @staticmethod\n"
        "    def forward(ctx, *xs):\n        return xs[0]\n\n    @staticmethod\n"
        "    def backward(ctx, *g):\n        return g\n\n\nz = K.apply()\n",
        "class M:\n    pass\nfrom paddle.autograd import PyLayer\n" LAYER "\nL.apply(L.apply(\n    1)).apply(3)\n",
        "import paddle; from paddle.autograd import PyLayer\n" LAYER "\nL.apply(  # why\n    1)",
        "from paddle.autograd import PyLayer\r\n\r\n\r\nclass L(PyLayer):\r\n    @staticmethod\r\n"
        "    def forward(ctx, x, *, k=1):\r\n        return x\r\n\r\n    @staticmethod\r\n"
        "    def backward(ctx, g):\r\n        return g\r\n\r\n\r\nL.apply(1, k=2)\r\n",
        "def f(cls, x):\n    from paddle.autograd import PyLayer\n    return cls.apply(x)\n",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        P2sStrbuf once, twice;
        P2sDiagSink sink1, sink2;
        bool changed1 = false, changed2 = true;
        if (transpile__run(inputs[i], &once, &changed1, &sink1) != P2S_TRANSPILE_OK || !changed1)
            fail_msg("case %zu: not transpiled: %s", i, sink1.items.size ? sink1.items.contents[0].message : "");
        assert_int_equal(transpile__run(once.buf, &twice, &changed2, &sink2), P2S_TRANSPILE_OK);
        if (changed2 || twice.len != once.len || memcmp(twice.buf, once.buf, once.len) != 0)
            fail_msg("case %zu: a second run changed\n%s\ninto\n%s", i, once.buf, twice.buf);
        /* notes (P2S300 on an unresolved call) as on the first run: none on `_p2s.apply` */
        assert_int_equal(sink2.items.size, sink1.items.size);
        for (size_t k = 0; k < sink2.items.size; k++)
            assert_string_equal(sink2.items.contents[k].code, sink1.items.contents[k].code);
        p2s_strbuf_release(&once);
        p2s_strbuf_release(&twice);
        p2s_diag_sink_release(&sink1);
        p2s_diag_sink_release(&sink2);
    }
}

/* Replaces the first `from` in text by `to`, into out. */
static void transpile__replace(const char *text, const char *from, const char *to, P2sStrbuf *out)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    p2s_strbuf_init(out);
    p2s_strbuf_add(out, text, (size_t)(at - text));
    p2s_strbuf_adds(out, to);
    p2s_strbuf_adds(out, at + strlen(from));
}

/* Edited after it was transpiled: a forward that gained a parameter gets a new builder, a new
 * call is rewritten, and a diagnostic on the edited file points into that file. */
static void test_transpile_regenerates_from_the_classes_as_they_are_now(void **state)
{
    (void)state;
    P2sStrbuf once, edited, again, bad, checked;
    P2sDiagSink sink;
    bool changed = false;
    assert_int_equal(transpile__run("from paddle.autograd import PyLayer\n" LAYER "\ny = L.apply(1)\n", &once, &changed, &sink),
                     P2S_TRANSPILE_OK);
    p2s_diag_sink_release(&sink);
    transpile__replace(once.buf, "def forward(ctx, x):", "def forward(ctx, x, y=2):", &edited);
    assert_int_equal(transpile__run(edited.buf, &again, &changed, &sink), P2S_TRANSPILE_OK);
    assert_true(changed);
    assert_non_null(strstr(again.buf, "def _p2s_static_L(x, y=_p2s.DEFAULT):"));
    assert_null(strstr(strstr(again.buf, "_p2s_static_L") + 1, "_p2s_static_L"));
    p2s_diag_sink_release(&sink);
    p2s_strbuf_release(&again);

    transpile__replace(once.buf, "y = _p2s.apply(L, 1)\n", "y = _p2s.apply(L, 1); z = L.apply(1, 2)\n", &bad);
    assert_int_equal(transpile__run(bad.buf, &checked, &changed, &sink), P2S_TRANSPILE_CONTRACT_ERROR);
    assert_non_null(strstr(checked.buf, "y = _p2s.apply(L, 1); z = L.apply(1, 2)\n"));
    size_t at = (size_t)(strstr(bad.buf, "L.apply(1, 2)") - bad.buf);
    bool found = false;
    for (size_t k = 0; k < sink.items.size; k++) {
        const P2sDiag *d = &sink.items.contents[k];
        if (strcmp(d->code, "P2S111") == 0) {
            found = true;
            assert_true(d->span.start >= at && d->span.end <= at + strlen("L.apply(1, 2)"));
        }
    }
    assert_true(found);
    p2s_diag_sink_release(&sink);
    p2s_strbuf_release(&checked);
    p2s_strbuf_release(&bad);
    p2s_strbuf_release(&edited);
    p2s_strbuf_release(&once);
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
        cmocka_unit_test(test_transpile_verification_by_shape_catches_a_builder_unlike_its_shape),
        cmocka_unit_test(test_transpile_verification_catches_a_broken_method),
        cmocka_unit_test(test_parse_kind_by_grammar_symbol),
        cmocka_unit_test(test_transpile_regenerates_its_own_output_identically),
        cmocka_unit_test(test_transpile_regenerates_from_the_classes_as_they_are_now),
    };
    int failed = cmocka_run_group_tests_name("transpile", tests, NULL, NULL);
    p2s_rules_release(&rules);
    return failed;
}
