/* signature.c — forward's signature read from its parameters node, and Python's binding of a
 * call's arguments to it: positional arguments first, in order, to the parameters that take a
 * position (then *args), keywords after them by name (then **kwargs). An unpacked `*xs` makes
 * every later positional argument's place unknown, and any unpacking makes "missing" unknown:
 * nothing is claimed that depends on a length seen only at run time. */
#include "signature.h"

#include <stdint.h>
#include <string.h>

#include "parse.h"
#include "strbuf.h"

/* Appends p's text as diagnostics quote it (p2s_node_flat_text); *name_at receives where its
 * name lands: after any `*` / `**` and the space flattening leaves after them. */
static void signature__flat(const P2sSource *src, TSNode p, TSNode name, P2sStrbuf *out, P2sSpan *name_at)
{
    size_t at = out->len;
    p2s_node_flat_text(src, p, out);
    if (ts_node_is_null(name))
        return;
    while (at < out->len && (out->buf[at] == '*' || out->buf[at] == ' '))
        at++;
    *name_at = p2s_span(at, at + (ts_node_end_byte(name) - ts_node_start_byte(name)));
}

/* What one node of a parameters list declares: its kind, default and name node (null for the
 * separators and what binds no name). */
typedef struct {
    P2sKind node_kind;
    bool var_positional, var_keyword, has_default;
    TSNode name;
} Declared;

static Declared signature__declared(TSNode p)
{
    Declared d;
    memset(&d, 0, sizeof d);
    d.node_kind = p2s_kind(p);
    TSNode inner = p;
    if (d.node_kind == P2S_KIND_TYPED_PARAMETER)
        inner = ts_node_named_child(p, 0);
    switch (d.node_kind == P2S_KIND_TYPED_PARAMETER ? p2s_kind(inner) : d.node_kind) {
    case P2S_KIND_IDENTIFIER:
        d.name = inner;
        break;
    case P2S_KIND_DEFAULT_PARAMETER:
    case P2S_KIND_TYPED_DEFAULT_PARAMETER:
        d.name = p2s_child(p, P2S_FIELD_NAME);
        d.has_default = true;
        break;
    case P2S_KIND_LIST_SPLAT_PATTERN:
        d.var_positional = true;
        d.name = ts_node_named_child(inner, 0);
        break;
    case P2S_KIND_DICTIONARY_SPLAT_PATTERN:
        d.var_keyword = true;
        d.name = ts_node_named_child(inner, 0);
        break;
    default:
        break;
    }
    if (!ts_node_is_null(d.name) && p2s_kind(d.name) != P2S_KIND_IDENTIFIER)
        d.name = (TSNode){0};
    return d;
}

P2sSignature *p2s_signature_read(const P2sSource *src, TSNode def, bool only_staticmethod)
{
    P2sSignature *sig = p2s_calloc(1, sizeof *sig);
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    TSNode params = p2s_child(def, P2S_FIELD_PARAMETERS);
    uint32_t n = p2s_signature_param_count(params);
    P2sParamKind kind = P2S_PARAM_POSITIONAL_OR_KEYWORD;
    bool first = true;
    for (uint32_t i = 0; i < n; i++) {
        TSNode p = ts_node_named_child(params, i);
        if (p2s_kind(p) == P2S_KIND_COMMENT)
            continue;
        Declared d = signature__declared(p);
        if (!first)
            p2s_strbuf_adds(&text, ", ");
        if (!first && sig->after_ctx == 0 && sig->ctx.end > 0)
            sig->after_ctx = text.len;
        P2sSpan name = {0, 0};
        signature__flat(src, p, d.name, &text, &name);
        bool named = !ts_node_is_null(d.name);
        if (first) {
            first = false;
            if (named && !d.var_positional && !d.var_keyword) {
                sig->ctx = name;
                sig->ctx_plain = d.node_kind == P2S_KIND_IDENTIFIER;
                continue;
            }
        }
        if (d.node_kind == P2S_KIND_POSITIONAL_SEPARATOR) {
            for (size_t k = 0; k < sig->params.size; k++)
                if (sig->params.contents[k].kind == P2S_PARAM_POSITIONAL_OR_KEYWORD)
                    sig->params.contents[k].kind = P2S_PARAM_POSITIONAL_ONLY;
            continue;
        }
        if (d.node_kind == P2S_KIND_KEYWORD_SEPARATOR) {
            sig->bare_star = true;
            kind = P2S_PARAM_KEYWORD_ONLY;
            continue;
        }
        if (!named)
            continue;
        P2sParam param = {kind, d.has_default, name};
        if (d.var_positional) {
            param.kind = P2S_PARAM_VAR_POSITIONAL;
            kind = P2S_PARAM_KEYWORD_ONLY;
        } else if (d.var_keyword) {
            param.kind = P2S_PARAM_VAR_KEYWORD;
        }
        array_push(&sig->params, param);
    }
    if (sig->ctx.end > 0 && sig->after_ctx == 0)
        sig->after_ctx = text.len;  /* ctx alone */
    sig->bindable = sig->ctx.end > 0 && only_staticmethod;
    array_shrink(&sig->params);
    sig->text = p2s_strbuf_detach(&text, NULL);
    return sig;
}

uint32_t p2s_signature_param_count(TSNode params)
{
    return !ts_node_is_null(params) ? ts_node_named_child_count(params) : 0;
}

TSNode p2s_signature_param_target(TSNode params, uint32_t i)
{
    TSNode p = ts_node_named_child(params, i);
    TSNode name = p2s_child(p, P2S_FIELD_NAME);
    return !ts_node_is_null(name) ? name : p;
}

P2sSignature *p2s_signature_copy(const P2sSignature *sig)
{
    P2sSignature *copy = p2s_malloc(sizeof *copy);
    *copy = *sig;
    copy->text = p2s_strdup(sig->text);
    memset(&copy->params, 0, sizeof copy->params);
    for (size_t i = 0; i < sig->params.size; i++)
        array_push(&copy->params, sig->params.contents[i]);
    array_shrink(&copy->params);
    return copy;
}

bool p2s_signature_same(const P2sSignature *a, const P2sSignature *b)
{
    if (!a || !b)
        return a == b;
    return a->bindable == b->bindable && strcmp(a->text, b->text) == 0;
}

void p2s_signature_free(P2sSignature *sig)
{
    if (!sig)
        return;
    p2s_free(sig->text);
    array_delete(&sig->params);
    p2s_free(sig);
}

void p2s_signatures_release(P2sSignatures *self)
{
    for (size_t i = 0; i < self->size; i++)
        p2s_signature_free(self->contents[i]);
    array_delete(self);
}

bool p2s_param_is(const P2sSignature *sig, const P2sParam *param, const char *name, size_t len)
{
    return param->name.end - param->name.start == len && memcmp(sig->text + param->name.start, name, len) == 0;
}

/* The parameter a keyword names: a positional-or-keyword or keyword-only one; SIZE_MAX. */
static size_t signature__keyword(const P2sSignature *sig, const char *name, size_t len)
{
    for (size_t k = 0; k < sig->params.size; k++) {
        P2sParamKind kind = sig->params.contents[k].kind;
        if ((kind == P2S_PARAM_POSITIONAL_OR_KEYWORD || kind == P2S_PARAM_KEYWORD_ONLY) &&
            p2s_param_is(sig, &sig->params.contents[k], name, len))
            return k;
    }
    return SIZE_MAX;
}

static size_t signature__of_kind(const P2sSignature *sig, P2sParamKind kind)
{
    for (size_t k = 0; k < sig->params.size; k++)
        if (sig->params.contents[k].kind == kind)
            return k;
    return SIZE_MAX;
}

void p2s_bind(const P2sSource *src, const P2sSignature *sig, TSNode arguments, P2sBinding *out)
{
    memset(out, 0, sizeof *out);
    out->missing = SIZE_MAX;
    for (size_t k = 0; k < sig->params.size; k++) {
        P2sParamKind kind = sig->params.contents[k].kind;
        if (kind == P2S_PARAM_POSITIONAL_ONLY || kind == P2S_PARAM_POSITIONAL_OR_KEYWORD) {
            out->capacity++;
            out->required += !sig->params.contents[k].has_default;
        }
    }
    size_t var_positional = signature__of_kind(sig, P2S_PARAM_VAR_POSITIONAL);
    size_t var_keyword = signature__of_kind(sig, P2S_PARAM_VAR_KEYWORD);
    Array(unsigned char) bound = {0};
    for (size_t k = 0; k < sig->params.size; k++)
        array_push(&bound, 0);
    /* Positional arguments bind before keywords, wherever the keywords are written. */
    uint32_t n = !ts_node_is_null(arguments) ? ts_node_named_child_count(arguments) : 0;
    for (uint32_t i = 0; i < n; i++) {
        TSNode a = ts_node_named_child(arguments, i);
        P2sKind kind = p2s_kind(a);
        if (kind == P2S_KIND_COMMENT)
            continue;
        P2sBoundArgument arg = {a, P2S_BOUND_UNPACKED, SIZE_MAX};
        if (kind == P2S_KIND_LIST_SPLAT) {
            out->list_unpacked = true;
        } else if (kind == P2S_KIND_DICTIONARY_SPLAT) {
            out->dict_unpacked = true;
        } else if (kind == P2S_KIND_KEYWORD_ARGUMENT) {
            arg.kind = P2S_BOUND_NO_KEYWORD;  /* bound below */
        } else if (out->list_unpacked) {
            arg.kind = P2S_BOUND_AFTER_UNPACKED;
            out->positional++;
        } else if (out->positional < out->capacity) {
            arg.kind = P2S_BOUND_PARAM;
            arg.param = out->positional++;
            bound.contents[arg.param] = 1;
        } else {
            arg.kind = var_positional != SIZE_MAX ? P2S_BOUND_VAR_POSITIONAL : P2S_BOUND_EXTRA;
            arg.param = var_positional;
            out->positional++;
        }
        array_push(&out->arguments, arg);
    }
    for (size_t i = 0; i < out->arguments.size; i++) {
        P2sBoundArgument *arg = &out->arguments.contents[i];
        if (p2s_kind(arg->argument) != P2S_KIND_KEYWORD_ARGUMENT)
            continue;
        TSNode key = p2s_child(arg->argument, P2S_FIELD_NAME);
        P2sSpan s = !ts_node_is_null(key) ? p2s_node_span(key) : p2s_span(0, 0);
        size_t k = signature__keyword(sig, src->bytes + s.start, s.end - s.start);
        if (k != SIZE_MAX) {
            arg->kind = bound.contents[k] ? P2S_BOUND_DUPLICATE : P2S_BOUND_PARAM;
            arg->param = k;
            bound.contents[k] = 1;
        } else if (var_keyword != SIZE_MAX) {
            arg->kind = P2S_BOUND_VAR_KEYWORD;
            arg->param = var_keyword;
        }
    }
    for (size_t k = 0; k < sig->params.size && !out->list_unpacked && !out->dict_unpacked; k++) {
        const P2sParam *p = &sig->params.contents[k];
        if (!bound.contents[k] && !p->has_default && p->kind != P2S_PARAM_VAR_POSITIONAL &&
            p->kind != P2S_PARAM_VAR_KEYWORD) {
            out->missing = k;
            break;
        }
    }
    array_delete(&bound);
}

void p2s_binding_release(P2sBinding *self)
{
    array_delete(&self->arguments);
}
