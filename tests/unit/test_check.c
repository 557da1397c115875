/* Unit tests: the contract checks and hazards, as code lists over small sources. Each case
 * names the codes that must fire, in source order; "" means none may (correct code). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "parse.h"

typedef struct {
    const char *name;
    const char *source;
    const char *codes;     /* space-separated, in order */
} CheckCase;

#define HEAD "import paddle\nfrom paddle.autograd import PyLayer\n"
#define FWD(params, body) "    @staticmethod\n    def forward(" params "):\n" body
#define BWD(params, body) "    @staticmethod\n    def backward(" params "):\n" body
#define RET(x) "        return " x "\n"

static const CheckCase cases[] = {
    {"correct_request_anchor", HEAD "class T(PyLayer):\n"
     FWD("ctx, x", "        y = paddle.tanh(x)\n        ctx.save_for_backward(y)\n" RET("y"))
     BWD("ctx, dy", "        y, = ctx.saved_tensor()\n" RET("dy * (1 - paddle.square(y))")) "T.apply(paddle.ones([1]))\n", ""},
    {"missing_forward", HEAD "class T(PyLayer):\n" BWD("ctx, dy", RET("dy")), "P2S101 P2S301"},
    {"missing_both_applied", HEAD "class T(PyLayer):\n    pass\nT.apply(1)\n", "P2S101 P2S102 P2S301"},
    {"abstract_base_not_applied", HEAD "class T(PyLayer):\n    pass\n", ""},
    {"subclassed_base_may_leave_backward", HEAD "class B(PyLayer):\n" FWD("ctx, x", RET("x * 2"))
     "class C(B):\n" BWD("ctx, dy", RET("dy * 2")), ""},
    {"unknown_mixin_may_supply_backward", HEAD "from mixins import Grad\nclass T(Grad, PyLayer):\n" FWD("ctx, x", RET("x * 2")), ""},
    {"metaclass_may_supply_backward", HEAD "class T(PyLayer, metaclass=M):\n" FWD("ctx, x", RET("x * 2")), ""},
    {"assigned_backward_counts", HEAD "def g(ctx, dy):\n    return dy\nclass T(PyLayer):\n" FWD("ctx, x", RET("x * 2"))
     "    backward = staticmethod(g)\n", ""},
    {"not_static", HEAD "class T(PyLayer):\n    def forward(ctx, x):\n" RET("x * 2") BWD("ctx, dy", RET("dy * 2")), "P2S103 P2S301"},
    {"classmethod_is_not_static", HEAD "class T(PyLayer):\n    @classmethod\n    def forward(cls, ctx, x):\n" RET("x * 2")
     BWD("ctx, dy", RET("dy * 2")), "P2S103 P2S301"},
    {"other_decorator_may_be_static", HEAD "class T(PyLayer):\n    @amp_static\n    def forward(ctx, x):\n" RET("x * 2")
     BWD("ctx, dy", RET("dy * 2")), ""},
    {"no_parameters", HEAD "class T(PyLayer):\n" FWD("", RET("paddle.ones([1])")) BWD("ctx, dy", RET("None")), "P2S104 P2S301"},
    {"kwargs_first", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("**kw", RET("None")), "P2S104 P2S301"},
    {"varargs_first_still_gets_ctx", HEAD "class T(PyLayer):\n" FWD("*args", RET("args[1] * 2")) BWD("ctx, dy", RET("dy")), ""},
    {"grads_more_than_outputs", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("(x * 2,)")) BWD("ctx, a, b", RET("a")), "P2S105 P2S301"},
    {"grads_with_default_fit", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("(x * 2,)")) BWD("ctx, a, b=None", RET("a")), ""},
    {"grads_fewer_than_saved_outputs", HEAD "class T(PyLayer):\n"
     FWD("ctx, x", "        a = x * 2\n        b = x * 3\n        ctx.save_for_backward(a, b)\n" RET("a, b"))
     BWD("ctx, da", RET("da")), "P2S105 P2S301"},
    {"grads_unknown_for_split", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("paddle.split(x, 3)")) BWD("ctx, a, b, c", RET("a")), ""},
    {"grads_unknown_with_star", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("(x, *rest)")) BWD("ctx, a, b, c", RET("a")), ""},
    {"grads_one_return_path_unknown", HEAD "class T(PyLayer):\n"
     FWD("ctx, x", "        if x.shape[0] > 1:\n            return paddle.split(x, 2)\n" RET("(x,)")) BWD("ctx, a, b", RET("a")), ""},
    {"grads_more_than_one_tensor", HEAD "class T(PyLayer):\n"
     FWD("ctx, x", "        y = paddle.tanh(x)\n        ctx.save_for_backward(y)\n" RET("y")) BWD("ctx, a, b", RET("a")), "P2S105 P2S301"},
    {"grads_more_than_one_product", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2.0")) BWD("ctx, a, b", RET("a")), "P2S105 P2S301"},
    {"grads_more_than_one_difference", HEAD "class T(PyLayer):\n" FWD("ctx, x, y", RET("x - y")) BWD("ctx, a, b", RET("a, b")), "P2S105 P2S301"},
    {"grads_more_than_one_negation", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("-x")) BWD("ctx, a, b", RET("a")), "P2S105 P2S301"},
    {"grads_unknown_for_int_repeat", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("ctx, a, b", RET("a")), ""},
    {"grads_unknown_for_concatenation", HEAD "class T(PyLayer):\n" FWD("ctx, x, y", RET("x + y")) BWD("ctx, a, b", RET("a, b")), ""},
    {"grads_unknown_for_a_name", HEAD "class T(PyLayer):\n" FWD("ctx, x", "        y = (x * 2.0, x * 3.0)\n" RET("y")) BWD("ctx, a, b", RET("a")), ""},
    {"grads_one_value_star_backward", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2.0")) BWD("ctx, *grads", RET("grads[0]")), ""},
    {"forward_only", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2.0")) "T.apply(paddle.ones([1]))\n", "P2S102"},
    {"grads_nontensor_outputs_unknown", HEAD "class T(PyLayer):\n" FWD("ctx, x, n", RET("x * 2, n + 1")) BWD("ctx, dy", RET("dy, None")), ""},
    {"returns_more_than_inputs", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("ctx, dy", RET("dy * 2, None")), "P2S106 P2S301"},
    {"returns_fewer_may_be_fine", HEAD "class T(PyLayer):\n" FWD("ctx, x, y", RET("x * y")) BWD("ctx, dy", RET("dy")), ""},
    {"returns_unknown_name", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("ctx, dy", "        g = (dy, None)\n" RET("g")), ""},
    {"returns_varargs_forward", HEAD "class T(PyLayer):\n" FWD("ctx, *xs", RET("xs[0] * 2")) BWD("ctx, dy", RET("dy, dy")), ""},
    {"saved_without_save", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("ctx, dy", "        x, = ctx.saved_tensor()\n" RET("dy")), "P2S107 P2S301"},
    {"saved_by_helper", HEAD "class T(PyLayer):\n" FWD("ctx, x", "        keep(ctx, x)\n" RET("x * 2"))
     BWD("ctx, dy", "        x, = ctx.saved_tensor()\n" RET("dy")), ""},
    {"saved_in_closure", HEAD "class T(PyLayer):\n" FWD("ctx, x", "        def k():\n            ctx.save_for_backward(x)\n        k()\n" RET("x * 2"))
     BWD("ctx, dy", "        x, = ctx.saved_tensor()\n" RET("dy")), ""},
    {"save_in_backward", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("ctx, dy", "        ctx.save_for_backward(dy)\n" RET("dy")), "P2S108 P2S301"},
    {"mark_in_backward", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("ctx, dy", "        ctx.mark_non_differentiable(dy)\n" RET("dy")), "P2S108 P2S301"},
    {"user_attribute_calls_are_free", HEAD "class T(PyLayer):\n" FWD("ctx, x, f", "        ctx.func = f\n" RET("f(x)"))
     BWD("ctx, dy", RET("dy * ctx.func(dy)")), ""},
    {"save_twice", HEAD "class T(PyLayer):\n" FWD("ctx, x", "        ctx.save_for_backward(x)\n        ctx.save_for_backward(x * 2)\n" RET("x * 2"))
     BWD("ctx, dy", "        x, = ctx.saved_tensor()\n" RET("dy")), "P2S109 P2S301"},
    {"save_in_branches", HEAD "class T(PyLayer):\n"
     FWD("ctx, x, f", "        if f:\n            ctx.save_for_backward(x)\n        else:\n            ctx.save_for_backward(x * 2)\n" RET("x * 2"))
     BWD("ctx, dy", "        x, = ctx.saved_tensor()\n" RET("dy")), ""},
    {"apply_unknown_keyword", HEAD "class T(PyLayer):\n" FWD("ctx, x, scale=1.0", RET("x * scale")) BWD("ctx, dy", RET("dy"))
     "T.apply(paddle.ones([1]), scal=2.0)\n", "P2S110"},
    {"apply_positional_only_by_keyword", HEAD "class T(PyLayer):\n" FWD("ctx, x, /", RET("x * 2")) BWD("ctx, dy", RET("dy"))
     "T.apply(x=paddle.ones([1]))\n", "P2S112 P2S110"},
    {"apply_kwargs_take_anything", HEAD "class T(PyLayer):\n" FWD("ctx, x, **kw", RET("x * 2")) BWD("ctx, dy", RET("dy"))
     "T.apply(paddle.ones([1]), anything=2)\n", ""},
    {"apply_too_many", HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x * 2")) BWD("ctx, dy", RET("dy")) "T.apply(1, 2, 3)\n", "P2S111"},
    {"apply_varargs_take_more", HEAD "class T(PyLayer):\n" FWD("ctx, x, *rest", RET("x * 2")) BWD("ctx, dy", RET("dy")) "T.apply(1, 2, 3)\n", ""},
    {"apply_missing", HEAD "class T(PyLayer):\n" FWD("ctx, x, *, alpha", RET("x * alpha")) BWD("ctx, dy", RET("dy")) "T.apply(1)\n", "P2S112"},
    {"apply_splat_unknown", HEAD "class T(PyLayer):\n" FWD("ctx, x, y", RET("x * y")) BWD("ctx, dy", RET("dy")) "T.apply(*args)\nT.apply(1, **kw)\n", ""},
    {"apply_twice_given", HEAD "class T(PyLayer):\n" FWD("ctx, x, y", RET("x * y")) BWD("ctx, dy", RET("dy")) "T.apply(1, 2, y=3)\n", "P2S113"},
    {"apply_decorated_forward_unknown", HEAD "class T(PyLayer):\n    @staticmethod\n    @wrap\n    def forward(ctx, x):\n" RET("x")
     BWD("ctx, dy", RET("dy")) "T.apply(1, 2, 3)\n", ""},
    {"hazards", HEAD "class T(PyLayer):\n"
     FWD("ctx, x", "        a = x.numpy()\n        b = x.item()\n        c = x.tolist()\n        ctx.save_for_backward(x)\n        d = float(x)\n" RET("x * 2"))
     BWD("ctx, dy", "        n = int(dy)\n" RET("dy * n")), "P2S201 P2S202 P2S203 P2S204 P2S204"},
    {"number_conversions_of_non_tensors", HEAD "class T(PyLayer):\n"
     FWD("ctx, x, scale", "        ctx.s = float(scale)\n        n = int(x.shape[0])\n" RET("x * n"))
     BWD("ctx, dy", "        dy = dy * 2\n" RET("dy * float(len(ctx.s))")), ""},
    {"hazards_outside_pylayer", HEAD "def f(x):\n    return x.numpy(), float(x)\n", ""},
    {"unresolved_imported_apply", HEAD "from .ops import Gather\nGather.apply(1)\n", "P2S300"},
    {"unresolved_module_apply", HEAD "import ops\nops.Gather.apply(1)\n", "P2S300"},
    {"no_note_without_pylayer", "import pandas as pd\nfrom frames import Frame\nFrame.apply(f)\n", ""},
    {"note_for_a_parameter_none_for_a_local_class",
     HEAD "def f(Op):\n    return Op.apply(1)\nclass Table:\n    def apply(self):\n        pass\nTable.apply(t)\n", "P2S300"},
    {"noqa_hides_a_code", HEAD "class T(PyLayer):\n" FWD("ctx, x", "        a = x.numpy()  # noqa: P2S201\n        b = x.numpy()  # noqa: P2S202\n" RET("x"))
     BWD("ctx, dy", RET("dy")), "P2S201"},
};

static void run_case(const CheckCase *c, const char *select, const char *ignore, const char *want)
{
    P2sSource src;
    P2sDiagSink sink;
    P2sRules rules;
    P2sStrbuf err, got;
    P2sFindings found;
    p2s_strbuf_init(&err);
    p2s_strbuf_init(&got);
    p2s_diag_sink_init(&sink);
    assert_int_equal(p2s_rules_load_default(&rules, &err), 0);
    if (select)
        assert_int_equal(p2s_rules_select(&rules, select, &err), 0);
    if (ignore)
        assert_int_equal(p2s_rules_ignore(&rules, ignore, &err), 0);
    p2s_source_from_bytes(&src, "t.py", c->source, strlen(c->source));
    TSTree *tree = p2s_parse(&src, &sink);
    assert_int_equal(sink.errors, 0);
    p2s_find(&src, tree, &rules, NULL, &found);
    size_t errors = p2s_check(&src, &found, &rules, &sink);
    size_t counted = 0;
    for (size_t i = 0; i < sink.items.size; i++) {
        p2s_strbuf_addf(&got, "%s%s", i ? " " : "", sink.items.contents[i].code);
        counted += sink.items.contents[i].severity == P2S_ERROR;
    }
    if (strcmp(got.buf, want) != 0)
        fail_msg("case %s: got '%s', want '%s'", c->name, got.buf, want);
    assert_int_equal(errors, counted);
    p2s_findings_release(&found);
    ts_tree_delete(tree);
    p2s_source_release(&src);
    p2s_diag_sink_release(&sink);
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
    p2s_strbuf_release(&got);
}

static void test_check_cases_fire_exactly_where_expected(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i], NULL, NULL, cases[i].codes);
}

static const CheckCase *find_case(const char *name)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].name, name) == 0)
            return &cases[i];
    return NULL;
}

static void test_check_selection_applies_before_counting_errors(void **state)
{
    (void)state;
    const CheckCase *hazards = find_case("hazards");
    run_case(hazards, "P2S204", NULL, "P2S204 P2S204");
    run_case(hazards, NULL, "P2S2", "");
    run_case(hazards, "P2S20", "P2S204", "P2S201 P2S202 P2S203");
    /* The more specific select wins over a broader ignore (ruff). */
    run_case(hazards, "P2S203", "P2S2", "P2S203");
    /* An ignored contract error is no error: the run would not fail. */
    run_case(find_case("apply_too_many"), NULL, "P2S111", "");
}

static void test_check_messages_come_from_the_rules(void **state)
{
    (void)state;
    const char *source = HEAD "class T(PyLayer):\n" FWD("ctx, x", "        y = x.numpy()\n" RET("x")) BWD("ctx, dy", RET("dy"));
    const char overlay[] = "{\"diagnostics\": {\"P2S201\": {\"severity\": \"error\", \"message\": \"{call} in {where}: {{no}}\", \"fix\": null}}}";
    P2sSource src;
    P2sDiagSink sink;
    P2sRules rules;
    P2sStrbuf err;
    P2sFindings found;
    p2s_strbuf_init(&err);
    p2s_diag_sink_init(&sink);
    p2s_rules_load_default(&rules, &err);
    assert_int_equal(p2s_rules_load_text(&rules, "r.json", overlay, sizeof overlay - 1, &err), 0);
    p2s_source_from_bytes(&src, "t.py", source, strlen(source));
    TSTree *tree = p2s_parse(&src, &sink);
    p2s_find(&src, tree, &rules, NULL, &found);
    assert_int_equal(p2s_check(&src, &found, &rules, &sink), 1);
    assert_int_equal(sink.items.size, 2);  /* and the note that T is left as written */
    assert_string_equal(sink.items.contents[0].message, "x.numpy() in forward: {no}");
    assert_null(sink.items.contents[0].fix);
    assert_string_equal(sink.items.contents[1].code, "P2S301");
    p2s_findings_release(&found);
    ts_tree_delete(tree);
    p2s_source_release(&src);
    p2s_diag_sink_release(&sink);
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

static void test_check_span_of_unknown_keyword_is_the_name(void **state)
{
    (void)state;
    const char *source = HEAD "class T(PyLayer):\n" FWD("ctx, x", RET("x")) BWD("ctx, dy", RET("dy")) "T.apply(1, zz=2)\n";
    P2sSource src;
    P2sDiagSink sink;
    P2sRules rules;
    P2sStrbuf err;
    P2sFindings found;
    p2s_strbuf_init(&err);
    p2s_diag_sink_init(&sink);
    p2s_rules_load_default(&rules, &err);
    p2s_source_from_bytes(&src, "t.py", source, strlen(source));
    TSTree *tree = p2s_parse(&src, &sink);
    p2s_find(&src, tree, &rules, NULL, &found);
    p2s_check(&src, &found, &rules, &sink);
    assert_int_equal(sink.items.size, 1);
    const P2sDiag *d = &sink.items.contents[0];
    assert_int_equal(d->span.end - d->span.start, 2);
    assert_memory_equal(source + d->span.start, "zz", 2);
    assert_string_equal(d->fix, "forward accepts: x");
    p2s_findings_release(&found);
    ts_tree_delete(tree);
    p2s_source_release(&src);
    p2s_diag_sink_release(&sink);
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
}

/* One source checked with the default rules; warn, when given, is a `warn` selector. */
typedef struct {
    P2sSource src;
    P2sDiagSink sink;
    P2sRules rules;
    TSTree *tree;
    P2sFindings found;
    size_t errors;
} Checked;

static void check_source(Checked *c, const char *source, const char *warn)
{
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    p2s_diag_sink_init(&c->sink);
    assert_int_equal(p2s_rules_load_default(&c->rules, &err), 0);
    if (warn)
        assert_int_equal(p2s_rules_warn(&c->rules, warn, &err), 0);
    p2s_source_from_bytes(&c->src, "t.py", source, strlen(source));
    c->tree = p2s_parse(&c->src, &c->sink);
    p2s_find(&c->src, c->tree, &c->rules, NULL, &c->found);
    c->errors = p2s_check(&c->src, &c->found, &c->rules, &c->sink);
    p2s_strbuf_release(&err);
}

static void checked_release(Checked *c)
{
    p2s_findings_release(&c->found);
    ts_tree_delete(c->tree);
    p2s_source_release(&c->src);
    p2s_diag_sink_release(&c->sink);
    p2s_rules_release(&c->rules);
}

static const P2sPyLayerClass *class_named(const Checked *c, const char *name)
{
    for (size_t i = 0; i < c->found.classes.size; i++) {
        const P2sPyLayerClass *cls = &c->found.classes.contents[i];
        if (cls->qualname && strcmp(cls->qualname, name) == 0)
            return cls;
    }
    fail_msg("no class %s", name);
    return NULL;
}

static bool has_code(const Checked *c, const char *code)
{
    for (size_t i = 0; i < c->sink.items.size; i++)
        if (strcmp(c->sink.items.contents[i].code, code) == 0)
            return true;
    return false;
}

#define BAD "class Bad(PyLayer):\n" FWD("ctx, x", RET("x * 2.0")) BWD("ctx, a, b", RET("a"))
#define GOOD "class Good(PyLayer):\n" FWD("ctx, x", RET("x * 2.0")) BWD("ctx, dy", RET("dy * 2.0"))

static void test_check_error_leaves_class_its_sites_and_subclasses_as_written(void **state)
{
    (void)state;
    Checked c;
    check_source(&c, HEAD BAD "class Sub(Bad):\n" BWD("ctx, dy", RET("dy")) GOOD
                 "Bad.apply(1)\nSub.apply(1)\nGood.apply(1)\nGood.apply(1, 2)\n"
                 "def f(op):\n    return op.apply(1)\n", NULL);
    assert_int_equal(c.errors, 2);  /* P2S105 of Bad, P2S111 of the second Good site */
    assert_true(class_named(&c, "Bad")->as_written);
    assert_true(class_named(&c, "Sub")->as_written);
    assert_false(class_named(&c, "Good")->as_written);
    const bool want[] = {true, true, false, true, false};  /* Bad, Sub, Good, Good(1, 2), op */
    assert_int_equal(c.found.sites.size, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(c.found.sites.contents[i].as_written, want[i]);
    assert_true(has_code(&c, "P2S301") && has_code(&c, "P2S300") && !has_code(&c, "P2S302"));
    checked_release(&c);
}

static void test_check_unresolved_apply_stays_when_a_class_left_as_written_is_passed_around(void **state)
{
    (void)state;
    Checked c;
    check_source(&c, HEAD BAD "layers = [Bad]\ndef f(op):\n    return op.apply(1)\n", NULL);
    assert_int_equal(c.found.sites.size, 1);
    assert_true(c.found.sites.contents[0].as_written);
    assert_true(has_code(&c, "P2S302") && !has_code(&c, "P2S300"));
    checked_release(&c);
}

static void test_check_warn_reports_a_warning_and_still_leaves_the_class(void **state)
{
    (void)state;
    Checked c;
    check_source(&c, HEAD BAD "Bad.apply(1)\n", "P2S105");
    assert_int_equal(c.errors, 0);
    assert_true(has_code(&c, "P2S105"));
    assert_true(class_named(&c, "Bad")->as_written);
    assert_true(c.found.sites.contents[0].as_written);
    checked_release(&c);
}

static void test_check_hidden_finding_does_not_leave_the_class(void **state)
{
    (void)state;
    Checked c;
    check_source(&c, HEAD "class Bad(PyLayer):\n" FWD("ctx, x", RET("x * 2.0"))
                 "    @staticmethod\n    def backward(ctx, a, b):  # noqa: P2S105\n" RET("a") "Bad.apply(1)\n", NULL);
    assert_int_equal(c.errors, 0);
    assert_int_equal(c.sink.items.size, 0);
    assert_false(class_named(&c, "Bad")->as_written);
    assert_false(c.found.sites.contents[0].as_written);
    checked_release(&c);
}

/* forward's output count, kept on the class for the hover: known only when every return has
 * the same one, as P2S105 counts them (a literal tuple or list per element, one value one). */
static void test_check_counts_forward_outputs_when_every_return_agrees(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        size_t outputs;
    } outputs_cases[] = {
        {RET("x * 2.0, x * 3.0"), 2},
        {RET("[x, x]"), 2},
        {RET("(x,)"), 1},
        {RET("x * 2.0"), 1},
        {RET("x"), P2S_COUNT_UNKNOWN},
        {RET("paddle.split(x, 2)"), P2S_COUNT_UNKNOWN},
        {"        if x.shape[0]:\n            return x * 2.0, x\n" RET("x * 2.0, x"), 2},
        {"        if x.shape[0]:\n            return x * 2.0\n" RET("x * 2.0, x"), P2S_COUNT_UNKNOWN},
        {RET("(x, *rest)"), P2S_COUNT_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof outputs_cases / sizeof outputs_cases[0]; i++) {
        P2sStrbuf source;
        p2s_strbuf_init(&source);
        p2s_strbuf_addf(&source, HEAD "class T(PyLayer):\n" FWD("ctx, x", "%s") BWD("ctx, *dy", RET("dy[0]")), outputs_cases[i].body);
        Checked c;
        check_source(&c, source.buf, NULL);
        if (class_named(&c, "T")->forward_outputs != outputs_cases[i].outputs)
            fail_msg("case %zu: %zu outputs, want %zu", i, class_named(&c, "T")->forward_outputs, outputs_cases[i].outputs);
        checked_release(&c);
        p2s_strbuf_release(&source);
    }
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_cases_fire_exactly_where_expected),
        cmocka_unit_test(test_check_selection_applies_before_counting_errors),
        cmocka_unit_test(test_check_messages_come_from_the_rules),
        cmocka_unit_test(test_check_span_of_unknown_keyword_is_the_name),
        cmocka_unit_test(test_check_error_leaves_class_its_sites_and_subclasses_as_written),
        cmocka_unit_test(test_check_unresolved_apply_stays_when_a_class_left_as_written_is_passed_around),
        cmocka_unit_test(test_check_warn_reports_a_warning_and_still_leaves_the_class),
        cmocka_unit_test(test_check_hidden_finding_does_not_leave_the_class),
        cmocka_unit_test(test_check_counts_forward_outputs_when_every_return_agrees),
    };
    return cmocka_run_group_tests_name("check", tests, NULL, NULL);
}
