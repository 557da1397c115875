/* Unit tests: forward's signature read from its parameters, and the binding of a call's
 * arguments to it, as tables. A signature is shown as Python lists it with every default `=`
 * ("x, /, k=, *, n"); a binding as each argument's target in order: a parameter's name,
 * `*args` / `**kw[key]` for what they collect, and `unpacked`, `after`, `extra`, `no-keyword`,
 * `dup:NAME` for the rest, then `| missing NAME` when a required parameter is left unbound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "alloc.h"
#include "parse.h"
#include "signature.h"

/* forward's definition and a call of it, parsed together. */
typedef struct {
    P2sSource src;
    P2sDiagSink sink;
    TSTree *tree;
    TSNode def, arguments;
} Parsed;

static void parse(Parsed *p, const char *params, const char *decorator, const char *args)
{
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    p2s_strbuf_addf(&text, "%sdef forward(%s):\n    pass\nforward(%s)\n", decorator, params, args);
    p2s_source_from_bytes(&p->src, "t.py", text.buf, text.len);
    p2s_strbuf_release(&text);
    p2s_diag_sink_init(&p->sink);
    p->tree = p2s_parse(&p->src, &p->sink);
    assert_int_equal(p->sink.errors, 0);
    TSNode root = ts_tree_root_node(p->tree);
    p->def = ts_node_named_child(root, 0);
    if (p2s_kind(p->def) == P2S_KIND_DECORATED_DEFINITION)
        p->def = p2s_child(p->def, P2S_FIELD_DEFINITION);
    TSNode call = ts_node_named_child(ts_node_named_child(root, 1), 0);
    p->arguments = p2s_child(call, P2S_FIELD_ARGUMENTS);
}

static void parsed_release(Parsed *p)
{
    ts_tree_delete(p->tree);
    p2s_diag_sink_release(&p->sink);
    p2s_source_release(&p->src);
}

static void show_signature(const P2sSignature *sig, P2sStrbuf *out)
{
    P2sParamKind previous = P2S_PARAM_POSITIONAL_ONLY;
    bool star_shown = false;
    for (size_t i = 0; i < sig->params.size; i++) {
        const P2sParam *p = &sig->params.contents[i];
        const char *sep = out->len ? ", " : "";
        if (i > 0 && previous == P2S_PARAM_POSITIONAL_ONLY && p->kind != P2S_PARAM_POSITIONAL_ONLY) {
            p2s_strbuf_addf(out, "%s/", sep);
            sep = ", ";
        }
        if (p->kind == P2S_PARAM_KEYWORD_ONLY && previous < P2S_PARAM_VAR_POSITIONAL && !star_shown) {
            p2s_strbuf_addf(out, "%s*", sep);
            sep = ", ";
            star_shown = true;
        }
        p2s_strbuf_addf(out, "%s%s%.*s%s", sep,
                        p->kind == P2S_PARAM_VAR_POSITIONAL ? "*" : p->kind == P2S_PARAM_VAR_KEYWORD ? "**" : "",
                        (int)(p->name.end - p->name.start), sig->text + p->name.start, p->has_default ? "=" : "");
        previous = p->kind;
    }
    if (sig->params.size && previous == P2S_PARAM_POSITIONAL_ONLY)
        p2s_strbuf_adds(out, ", /");
}

typedef struct {
    const char *name;
    const char *params;        /* forward's, as written */
    const char *decorator;     /* lines above `def` */
    const char *want;          /* the parameters after ctx, shown as above */
    const char *ctx;           /* the name that receives ctx; "" when none */
    bool bindable;
    const char *accepted;      /* the text after ctx, as messages quote it */
} SignatureCase;

#define STATIC "@staticmethod\n"

static const SignatureCase signature_cases[] = {
    {"plain", "ctx, x, y", STATIC, "x, y", "ctx", true, "x, y"},
    {"defaults_and_annotations", "ctx, x: Tensor, k: int = 2, f=paddle.tanh", STATIC, "x, k=, f=", "ctx", true,
     "x: Tensor, k: int = 2, f=paddle.tanh"},
    {"positional_only", "ctx, x, /, k=2", STATIC, "x, /, k=", "ctx", true, "x, /, k=2"},
    {"keyword_only", "ctx, x, *, scale=1.0, mode", STATIC, "x, *, scale=, mode", "ctx", true, "x, *, scale=1.0, mode"},
    {"var_positional_makes_keyword_only", "ctx, *xs, mode='a', **kw", STATIC, "*xs, mode=, **kw", "ctx", true,
     "*xs, mode='a', **kw"},
    {"annotated_splats", "ctx, *xs: Tensor, **kw: int", STATIC, "*xs, **kw", "ctx", true, "*xs: Tensor, **kw: int"},
    {"whitespace_and_lines_flattened", "ctx,\n        x ,\n        k = 2", STATIC, "x, k=", "ctx", true, "x, k = 2"},
    {"spaced_stars_keep_their_names", "ctx, * xs, ** kw", STATIC, "*xs, **kw", "ctx", true, "* xs, ** kw"},
    {"comment_between_parameters", "ctx,  # the context\n        x", STATIC, "x", "ctx", true, "x"},
    {"annotated_ctx_still_receives_ctx", "ctx: object, x", STATIC, "x", "ctx", true, "x"},
    {"ctx_alone", "ctx", STATIC, "", "ctx", true, ""},
    {"varargs_first_takes_ctx_with_the_rest", "*args", STATIC, "*args", "", false, "*args"},
    {"no_parameters", "", STATIC, "", "", false, ""},
    {"other_decorator_is_not_bindable", "ctx, x", "@amp\n", "x", "ctx", false, "x"},
    {"two_decorators_are_not_bindable", "ctx, x", "@amp\n" STATIC, "x", "ctx", false, "x"},
};

static void test_signature_reads_kinds_defaults_names_and_ctx(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof signature_cases / sizeof signature_cases[0]; i++) {
        const SignatureCase *c = &signature_cases[i];
        Parsed p;
        parse(&p, c->params, c->decorator, "");
        bool only_static = strcmp(c->decorator, STATIC) == 0;
        P2sSignature *sig = p2s_signature_read(&p.src, p.def, only_static);
        P2sStrbuf got;
        p2s_strbuf_init(&got);
        show_signature(sig, &got);
        if (strcmp(got.buf, c->want) != 0)
            fail_msg("case %s: got '%s', want '%s'", c->name, got.buf, c->want);
        size_t ctx_len = sig->ctx.end - sig->ctx.start;
        if (ctx_len != strlen(c->ctx) || memcmp(sig->text + sig->ctx.start, c->ctx, ctx_len) != 0)
            fail_msg("case %s: ctx '%.*s', want '%s'", c->name, (int)ctx_len, sig->text + sig->ctx.start, c->ctx);
        if (sig->bindable != c->bindable)
            fail_msg("case %s: bindable %d", c->name, sig->bindable);
        if (strcmp(p2s_signature_accepted(sig), c->accepted) != 0)
            fail_msg("case %s: accepted '%s', want '%s'", c->name, p2s_signature_accepted(sig), c->accepted);
        p2s_strbuf_release(&got);
        p2s_signature_free(sig);
        parsed_release(&p);
    }
}

static void test_signature_ctx_plain_only_for_a_bare_name(void **state)
{
    (void)state;
    const char *params[] = {"ctx, x", "ctx: object, x", "ctx=None, x"};
    const bool plain[] = {true, false, false};
    for (size_t i = 0; i < 3; i++) {
        Parsed p;
        parse(&p, params[i], STATIC, "");
        P2sSignature *sig = p2s_signature_read(&p.src, p.def, true);
        assert_int_equal(sig->ctx_plain, plain[i]);
        p2s_signature_free(sig);
        parsed_release(&p);
    }
}

static void test_signature_receives_ctx_unless_nothing_a_bare_star_or_kwargs_comes_first(void **state)
{
    (void)state;
    static const struct {
        const char *params;
        bool receives;
    } cases[] = {
        {"ctx, x", true}, {"ctx: object", true}, {"ctx=None", true}, {"*args", true}, {"*args: int, k", true},
        {"", false}, {"*, k", false}, {"**kwargs", false}, {"  # a comment\n  ", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        Parsed p;
        parse(&p, cases[i].params, STATIC, "");
        P2sSignature *sig = p2s_signature_read(&p.src, p.def, true);
        if (p2s_signature_receives_ctx(sig) != cases[i].receives)
            fail_msg("(%s): receives ctx %d", cases[i].params, !cases[i].receives);
        p2s_signature_free(sig);
        parsed_release(&p);
    }
}

static void test_signature_copy_stands_without_its_source(void **state)
{
    (void)state;
    Parsed p;
    parse(&p, "ctx, x, /, k=2, *, scale=1.0", STATIC, "");
    P2sSignature *sig = p2s_signature_read(&p.src, p.def, true);
    parsed_release(&p);
    P2sSignature *copy = p2s_signature_copy(sig);
    p2s_signature_free(sig);
    P2sStrbuf got;
    p2s_strbuf_init(&got);
    show_signature(copy, &got);
    assert_string_equal(got.buf, "x, /, k=, *, scale=");
    assert_true(p2s_param_is(copy, &copy->params.contents[2], "scale", 5));
    p2s_strbuf_release(&got);
    p2s_signature_free(copy);
}

/* Each parameter listed, as the text of the node that binds its names. */
static void test_signature_param_targets_name_each_parameter(void **state)
{
    (void)state;
    static const struct {
        const char *params;
        const char *want;
    } cases[] = {
        {"", ""},
        {"ctx, x, /, k=2, *, n: int = 1", "ctx|x|/|k|*|n"},
        {"ctx, *args, y: float, **kw", "ctx|*args|y: float|**kw"},
        {"ctx,  # the context\n    x", "ctx|# the context|x"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        Parsed p;
        parse(&p, cases[c].params, "", "");
        TSNode params = p2s_child(p.def, P2S_FIELD_PARAMETERS);
        P2sStrbuf got;
        p2s_strbuf_init(&got);
        uint32_t n = p2s_signature_param_count(params);
        for (uint32_t i = 0; i < n; i++) {
            P2sSpan s = p2s_node_span(p2s_signature_param_target(params, i));
            p2s_strbuf_addf(&got, "%s%.*s", i ? "|" : "", (int)(s.end - s.start), p.src.bytes + s.start);
        }
        if (strcmp(got.buf, cases[c].want) != 0)
            fail_msg("(%s): got '%s', want '%s'", cases[c].params, got.buf, cases[c].want);
        p2s_strbuf_release(&got);
        parsed_release(&p);
    }
    assert_int_equal(p2s_signature_param_count((TSNode){0}), 0);
}

typedef struct {
    const char *name;
    const char *params;
    const char *args;
    const char *want;
} BindCase;

static const BindCase bind_cases[] = {
    {"positional_in_order", "ctx, x, y", "a, b", "x y"},
    {"keywords_by_name_in_any_order", "ctx, x, y", "y=b, x=a", "y x"},
    {"default_may_be_left_out", "ctx, x, k=2", "a", "x"},
    {"missing_required", "ctx, x, y", "a", "x | missing y"},
    {"missing_keyword_only", "ctx, x, *, mode", "a", "x | missing mode"},
    {"too_many_positional", "ctx, x, k=2", "a, b, c", "x k extra"},
    {"varargs_collect_the_rest", "ctx, x, *xs", "a, b, c", "x *xs *xs"},
    {"keyword_only_not_by_position", "ctx, x, *, scale=1.0", "a, b", "x extra"},
    {"positional_only_not_by_keyword", "ctx, x, /, k=2", "x=a", "no-keyword | missing x"},
    {"positional_only_keyword_goes_to_kwargs", "ctx, x, /, **kw", "a, x=b", "x **kw[x]"},
    {"unknown_keyword", "ctx, x", "a, y=b", "x no-keyword"},
    {"unknown_keyword_to_kwargs", "ctx, x, **kw", "a, y=b", "x **kw[y]"},
    {"keyword_named_like_varargs_is_unknown", "ctx, *args", "args=1", "no-keyword"},
    {"given_twice", "ctx, x, y=1", "a, x=b", "x dup:x"},
    {"positional_bind_before_keywords", "ctx, x, y", "y=b, *[a]", "y unpacked"},
    {"list_splat_makes_later_positional_unknown", "ctx, x, y, z", "a, *xs, c", "x unpacked after"},
    {"list_splat_hides_missing", "ctx, x, y", "*xs", "unpacked"},
    {"dict_splat_hides_missing", "ctx, x, y", "a, **kw", "x unpacked"},
    {"splat_keeps_keyword_checks", "ctx, x", "*xs, y=1", "unpacked no-keyword"},
    {"comments_are_no_arguments", "ctx, x", "a,  # the input\n", "x"},
    {"no_arguments", "ctx", "", ""},
};

static void show_binding(const P2sSignature *sig, const P2sBinding *b, const P2sSource *src, P2sStrbuf *out)
{
    for (size_t i = 0; i < b->arguments.size; i++) {
        const P2sBoundArgument *a = &b->arguments.contents[i];
        const P2sParam *p = a->param != SIZE_MAX ? &sig->params.contents[a->param] : NULL;
        int len = p ? (int)(p->name.end - p->name.start) : 0;
        const char *name = p ? sig->text + p->name.start : "";
        if (i)
            p2s_strbuf_addch(out, ' ');
        switch (a->kind) {
        case P2S_BOUND_PARAM: p2s_strbuf_addf(out, "%.*s", len, name); break;
        case P2S_BOUND_VAR_POSITIONAL: p2s_strbuf_addf(out, "*%.*s", len, name); break;
        case P2S_BOUND_VAR_KEYWORD: {
            P2sSpan key = p2s_node_span(p2s_child(a->argument, P2S_FIELD_NAME));
            p2s_strbuf_addf(out, "**%.*s[%.*s]", len, name, (int)(key.end - key.start), src->bytes + key.start);
            break;
        }
        case P2S_BOUND_UNPACKED: p2s_strbuf_adds(out, "unpacked"); break;
        case P2S_BOUND_AFTER_UNPACKED: p2s_strbuf_adds(out, "after"); break;
        case P2S_BOUND_EXTRA: p2s_strbuf_adds(out, "extra"); break;
        case P2S_BOUND_NO_KEYWORD: p2s_strbuf_adds(out, "no-keyword"); break;
        case P2S_BOUND_DUPLICATE: p2s_strbuf_addf(out, "dup:%.*s", len, name); break;
        }
    }
    if (b->missing != SIZE_MAX) {
        const P2sParam *p = &sig->params.contents[b->missing];
        p2s_strbuf_addf(out, " | missing %.*s", (int)(p->name.end - p->name.start), sig->text + p->name.start);
    }
}

static void test_bind_follows_python(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bind_cases / sizeof bind_cases[0]; i++) {
        const BindCase *c = &bind_cases[i];
        Parsed p;
        parse(&p, c->params, STATIC, c->args);
        P2sSignature *sig = p2s_signature_read(&p.src, p.def, true);
        P2sBinding b;
        p2s_bind(&p.src, sig, p.arguments, &b);
        P2sStrbuf got;
        p2s_strbuf_init(&got);
        show_binding(sig, &b, &p.src, &got);
        const char *shown = got.buf[0] == ' ' ? got.buf + 1 : got.buf;
        if (strcmp(shown, c->want) != 0)
            fail_msg("case %s: got '%s', want '%s'", c->name, shown, c->want);
        p2s_strbuf_release(&got);
        p2s_binding_release(&b);
        p2s_signature_free(sig);
        parsed_release(&p);
    }
}

static void test_bind_counts_positional_capacity_for_messages(void **state)
{
    (void)state;
    Parsed p;
    parse(&p, "ctx, x, /, k=2, *, scale=1.0", STATIC, "a, b, c, d");
    P2sSignature *sig = p2s_signature_read(&p.src, p.def, true);
    P2sBinding b;
    p2s_bind(&p.src, sig, p.arguments, &b);
    assert_int_equal(b.positional, 4);
    assert_int_equal(b.capacity, 2);
    assert_int_equal(b.required, 1);
    assert_false(b.list_unpacked);
    p2s_binding_release(&b);
    p2s_signature_free(sig);
    parsed_release(&p);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signature_reads_kinds_defaults_names_and_ctx),
        cmocka_unit_test(test_signature_ctx_plain_only_for_a_bare_name),
        cmocka_unit_test(test_signature_receives_ctx_unless_nothing_a_bare_star_or_kwargs_comes_first),
        cmocka_unit_test(test_signature_copy_stands_without_its_source),
        cmocka_unit_test(test_signature_param_targets_name_each_parameter),
        cmocka_unit_test(test_bind_follows_python),
        cmocka_unit_test(test_bind_counts_positional_capacity_for_messages),
    };
    return cmocka_run_group_tests_name("signature", tests, NULL, NULL);
}
