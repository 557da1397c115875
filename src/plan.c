/* plan.c — call-site rewrites, the runtime import, and the generated static builders. A module
 * that only uses Paddle's PyLayer-backed APIs gets the runtime import alone. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "nameset.h"
#include "parse.h"
#include "untranspile.h"
#include "version.h"

void p2s_plan_init(P2sPlan *self)
{
    memset(self, 0, sizeof *self);
    p2s_strbuf_init(&self->tail);
}

void p2s_plan_add(P2sPlan *self, size_t start, size_t end, const char *text, size_t len)
{
    P2sEdit e = {start, end, p2s_strndup(text, len), 0};
    array_push(&self->edits, e);
}

void p2s_plan_insert_ranked(P2sPlan *self, size_t at, const char *text, size_t rank)
{
    P2sEdit e = {at, at, p2s_strdup(text), rank};
    array_push(&self->edits, e);
}

static int plan__compare(const void *a, const void *b)
{
    const P2sEdit *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return 0;
}

int p2s_plan_finish(P2sPlan *self, P2sDiagSink *sink)
{
    if (self->edits.size > 1) /* an empty plan has no array: qsort's pointer must not be NULL */
        qsort(self->edits.contents, self->edits.size, sizeof(P2sEdit), plan__compare);
    for (size_t i = 1; i < self->edits.size; i++) {
        const P2sEdit *prev = &self->edits.contents[i - 1], *cur = &self->edits.contents[i];
        /* Two insertions at one offset of one rank would be ordered by chance: refused too. */
        if (cur->start < prev->end ||
            (cur->start == prev->start && cur->end == prev->end && cur->rank == prev->rank)) {
            p2s_diag_emitf(sink, P2S_ERROR, "P2S900", p2s_span(cur->start, cur->end),
                           "internal error: overlapping edits; please report this input");
            return -1;
        }
    }
    return 0;
}

bool p2s_plan_is_empty(const P2sPlan *self)
{
    return self->edits.size == 0 && self->tail.len == 0;
}

void p2s_plan_release(P2sPlan *self)
{
    for (size_t i = 0; i < self->edits.size; i++)
        p2s_free(self->edits.contents[i].text);
    array_delete(&self->edits);
    p2s_strbuf_release(&self->tail);
    for (size_t i = 0; i < self->builders.size; i++)
        p2s_free(self->builders.contents[i].qualname);
    array_delete(&self->builders);
    p2s_strings_release(&self->shapes);
}

void p2s_plan_expand(const char *shape, const char *qualname, P2sStrbuf *out)
{
    for (const char *c = shape; *c; c++) {
        if (*c == P2S_PLAN_NAME)
            p2s_strbuf_adds(out, qualname);
        else if (*c == P2S_PLAN_MANGLED)
            for (const char *q = qualname; *q; q++)
                p2s_strbuf_adds(out, *q == '.' ? "__" : (char[2]){*q, 0});
        else
            p2s_strbuf_addch(out, *c);
    }
}

static bool plan__has_arguments(TSNode args)
{
    uint32_t n = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < n; i++)
        if (p2s_kind(ts_node_named_child(args, i)) != P2S_KIND_COMMENT)
            return true;
    return false;
}

/* The `.` token of an attribute node. */
static TSNode plan__dot(TSNode attribute)
{
    uint32_t n = ts_node_child_count(attribute);
    for (uint32_t i = 0; i < n; i++) {
        TSNode child = ts_node_child(attribute, i);
        if (!ts_node_is_named(child) && strcmp(ts_node_type(child), ".") == 0)
            return child;
    }
    return (TSNode){0};
}

/* X.apply(a) -> _p2s.apply(X, a) and X.apply -> _p2s.applier(X), by edits around X that never
 * cover it: X may hold sites of its own (`A.apply(x).apply(y)`), and every newline stays, so
 * later lines keep their numbers. The wrapper of the outer site goes in first: its rank is
 * lower the longer its object. */
static void plan__add_site(P2sPlan *plan, const P2sApplySite *site)
{
    TSNode object = p2s_child(site->attribute, P2S_FIELD_OBJECT);
    TSNode name = p2s_child(site->attribute, P2S_FIELD_ATTRIBUTE);
    TSNode dot = plan__dot(site->attribute);
    P2sSpan obj = p2s_node_span(object);
    size_t rank = SIZE_MAX - (obj.end - obj.start);
    bool call = p2s_node_present(site->call);
    p2s_plan_insert_ranked(plan, obj.start, call ? "_p2s.apply(" : "_p2s.applier(", rank);
    if (p2s_node_present(dot))
        p2s_plan_add(plan, ts_node_start_byte(dot), ts_node_end_byte(dot), "", 0);
    if (!call) {
        p2s_plan_add(plan, ts_node_start_byte(name), ts_node_end_byte(name), ")", 1);
        return;
    }
    p2s_plan_add(plan, ts_node_start_byte(name), ts_node_end_byte(name), "", 0);
    TSNode args = p2s_child(site->call, P2S_FIELD_ARGUMENTS);
    size_t open = ts_node_start_byte(args);
    const char *sep = plan__has_arguments(args) ? ", " : "";
    p2s_plan_add(plan, open, open + 1, sep, strlen(sep));
}

/* Whether the statement that ends at `at` ends its line, or is followed by `;`, a comment or
 * a continuation: what Python requires, and tree-sitter does not check (`import a b`). */
static bool plan__statement_ends(const P2sSource *src, size_t at)
{
    while (at < src->len && (src->bytes[at] == ' ' || src->bytes[at] == '\t' || src->bytes[at] == '\f'))
        at++;
    return at >= src->len || strchr("\n\r#;\\", src->bytes[at]) != NULL;
}

/* Returns 0, or -1 with a syntax error when the line to join is not valid Python. */
static int plan__add_runtime_import(P2sPlan *plan, const P2sSource *src, const P2sFindings *found,
                                    const P2sRules *rules, const char *eol, P2sDiagSink *sink)
{
    size_t at = found->runtime_import_at;
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    switch (found->runtime_import) {
    case P2S_IMPORT_JOIN_AFTER:
        if (!plan__statement_ends(src, at)) {
            p2s_diag_emitf(sink, P2S_ERROR, "P2S001", p2s_span(at, at + 1),
                           "invalid syntax: two statements on one line need a ';' between them");
            p2s_strbuf_release(&text);
            return -1;
        }
        p2s_strbuf_adds(&text, "; " P2S_RUNTIME_IMPORT);
        break;
    case P2S_IMPORT_JOIN_BEFORE:
        p2s_strbuf_adds(&text, P2S_RUNTIME_IMPORT "; ");
        break;
    case P2S_IMPORT_OWN_LINE:
        if (at == 0 && src->len >= 3 && memcmp(src->bytes, "\xEF\xBB\xBF", 3) == 0)
            at = 3;
        p2s_strbuf_addf(&text, P2S_RUNTIME_IMPORT "%s", eol);
        p2s_rules_emit(rules, sink, "P2S090", p2s_span(at, at), NULL, 0);
        break;
    }
    p2s_plan_add(plan, at, at, text.buf, text.len);
    p2s_strbuf_release(&text);
    return 0;
}

/* Builder parameters from forward's signature (less ctx): defaults become _p2s.DEFAULT,
 * annotations go; `/` stays after positional-only parameters, a bare `*` before keyword-only
 * ones. Fills the signature, the positional tuple and the keyword dict of the PyLayerOp call. */
static void plan__builder_parameters(const P2sSignature *forward, P2sStrbuf *sig, P2sStrbuf *args,
                                     P2sStrbuf *kwargs)
{
    size_t items = 0;       /* entries of the positional tuple: one needs a trailing comma */
    bool star_due = forward->bare_star;
    for (size_t i = 0; i < forward->params.size; i++) {
        const P2sParam *p = &forward->params.contents[i];
        if (i > 0 && forward->params.contents[i - 1].kind == P2S_PARAM_POSITIONAL_ONLY &&
            p->kind != P2S_PARAM_POSITIONAL_ONLY)
            p2s_strbuf_adds(sig, ", /");
        if (star_due && (p->kind == P2S_PARAM_KEYWORD_ONLY || p->kind == P2S_PARAM_VAR_KEYWORD)) {
            p2s_strbuf_adds(sig, sig->len ? ", *" : "*");
            star_due = false;
        }
        int len = (int)(p->name.end - p->name.start);
        const char *text = forward->text + p->name.start;
        const char *prefix = p->kind == P2S_PARAM_VAR_POSITIONAL ? "*" : p->kind == P2S_PARAM_VAR_KEYWORD ? "**" : "";
        p2s_strbuf_addf(sig, "%s%s%.*s%s", sig->len ? ", " : "", prefix, len, text,
                        p->has_default ? "=_p2s.DEFAULT" : "");
        switch (p->kind) {
        case P2S_PARAM_VAR_KEYWORD:
            p2s_strbuf_addf(kwargs, "%s**%.*s", kwargs->len ? ", " : "", len, text);
            break;
        case P2S_PARAM_VAR_POSITIONAL:
            p2s_strbuf_addf(args, "%s*%.*s", args->len ? ", " : "", len, text);
            items++;
            break;
        case P2S_PARAM_KEYWORD_ONLY:
            p2s_strbuf_addf(kwargs, "%s'%.*s': %.*s", kwargs->len ? ", " : "", len, text, len, text);
            break;
        case P2S_PARAM_POSITIONAL_ONLY:
        case P2S_PARAM_POSITIONAL_OR_KEYWORD:
            p2s_strbuf_addf(args, "%s%.*s", args->len ? ", " : "", len, text);
            items++;
            break;
        }
    }
    size_t n = forward->params.size;
    if (n > 0 && forward->params.contents[n - 1].kind == P2S_PARAM_POSITIONAL_ONLY)
        p2s_strbuf_adds(sig, ", /");
    if (star_due)
        p2s_strbuf_adds(sig, sig->len ? ", *" : "*");
    if (items == 1)
        p2s_strbuf_addch(args, ',');  /* (x,) and (*xs,): a tuple, not parentheses */
}

/* Appends cls's builder to the tail, made from its shape (the shape is added to the plan's
 * when new). */
static void plan__add_builder(P2sPlan *plan, P2sNameSet *shape_index, const P2sPyLayerClass *cls,
                              const char *eol)
{
    P2sStrbuf sig, args, kwargs, shape;
    p2s_strbuf_init(&sig);
    p2s_strbuf_init(&args);
    p2s_strbuf_init(&kwargs);
    p2s_strbuf_init(&shape);
    plan__builder_parameters(cls->signature, &sig, &args, &kwargs);
    const char q[] = {P2S_PLAN_NAME, 0}, mangled[] = {P2S_PLAN_MANGLED, 0};
    p2s_strbuf_addf(&shape, "%s%s"
                    "@_p2s.register(%s)%s"
                    "def _p2s_static_%s(%s):%s"
                    "    \"\"\"%s.apply in a static graph: one `pylayer` op.\"\"\"%s"
                    "    op = _p2s.PyLayerOp(%s, (%s), {%s})%s"
                    "    return op.build(forward=%s.forward, backward=%s.backward)%s",
                    eol, eol, q, eol, mangled, sig.buf, eol, q, eol, q, args.buf, kwargs.buf, eol,
                    q, q, eol);
    size_t index;
    if (!p2s_nameset_get(shape_index, shape.buf, shape.len, &index)) {
        index = plan->shapes.size;
        p2s_nameset_put(shape_index, shape.buf, shape.len, index);
        array_push(&plan->shapes, p2s_strbuf_detach(&shape, NULL));
    }
    P2sBuilder builder = {plan->tail.len, 0, index, p2s_strdup(cls->qualname)};
    p2s_plan_expand(plan->shapes.contents[index], cls->qualname, &plan->tail);
    builder.len = plan->tail.len - builder.at;
    array_push(&plan->builders, builder);
    p2s_strbuf_release(&sig);
    p2s_strbuf_release(&args);
    p2s_strbuf_release(&kwargs);
    p2s_strbuf_release(&shape);
}

static const char *plan__line_ending(const P2sSource *src)
{
    const char *nl = memchr(src->bytes, '\n', src->len);
    return nl && nl > src->bytes && nl[-1] == '\r' ? "\r\n" : "\n";
}

/* Whether anything is transpiled: a site, or a PyLayer (for its builder, or for other modules'
 * calls), that is not left as written. A file whose every PyLayer is left as written stays
 * byte-identical. */
static bool plan__transpiles_any(const P2sFindings *found)
{
    for (size_t i = 0; i < found->sites.size; i++)
        if (!found->sites.contents[i].as_written)
            return true;
    for (size_t i = 0; i < found->classes.size; i++)
        if (found->classes.contents[i].is_pylayer && !found->classes.contents[i].as_written)
            return true;
    return false;
}

P2sPlanStatus p2s_plan_build(const P2sSource *src, const P2sFindings *found, const P2sRules *rules,
                             bool with_tail, P2sDiagSink *sink, P2sPlan *out)
{
    P2sPlan plan;
    p2s_plan_init(&plan);
    bool transpiles = plan__transpiles_any(found);
    /* A module that only uses Paddle's PyLayer-backed APIs gets the runtime import (its patches
     * make them static) and nothing else: no marker, so a second run sees the import instead. */
    if (found->already_transpiled || (!transpiles && (!found->uses_paddle_api || found->has_runtime_import))) {
        *out = plan;
        return P2S_PLAN_MADE;
    }
    const char *eol = plan__line_ending(src);
    for (size_t i = 0; i < found->sites.size; i++)
        if (!found->sites.contents[i].as_written)
            plan__add_site(&plan, &found->sites.contents[i]);
    if (!found->has_runtime_import && plan__add_runtime_import(&plan, src, found, rules, eol, sink) < 0) {
        p2s_plan_release(&plan);
        return P2S_PLAN_NOT_PYTHON;
    }
    if (!with_tail || !transpiles)
        goto finish;

    if (src->len > 0 && src->bytes[src->len - 1] != '\n' && src->bytes[src->len - 1] != '\r')
        p2s_strbuf_adds(&plan.tail, eol);
    p2s_strbuf_addf(&plan.tail, "%s%s# --- pylayer2static " P2S_VERSION
                    ": static-graph builders (generated; edit the classes above instead) ---%s"
                    "_p2s.require(\"" P2S_VERSION "\")%s", eol, eol, eol, eol);
    P2sNameSet shape_index;
    p2s_nameset_init(&shape_index);
    for (size_t i = 0; i < found->classes.size; i++)
        if (found->classes.contents[i].builder && !found->classes.contents[i].as_written)
            plan__add_builder(&plan, &shape_index, &found->classes.contents[i], eol);
    p2s_nameset_release(&shape_index);
    p2s_strbuf_addf(&plan.tail, "# pylayer2static " P2S_VERSION "%s", eol);
finish:
    if (p2s_plan_finish(&plan, sink) < 0) {
        p2s_plan_release(&plan);
        return P2S_PLAN_INTERNAL_ERROR;
    }
    *out = plan;
    return P2S_PLAN_MADE;
}
