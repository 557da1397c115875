/* check.c — the PyLayer contract and static-graph hazards.
 *
 * Per PyLayer class: forward/backward present (P2S101/102), static (P2S103), ctx first
 * (P2S104); between its forward and backward: gradient counts (P2S105/106), the save/load
 * pairing and where ctx methods are called (P2S107-109); inside both: calls that need a
 * concrete Tensor value (P2S2xx): here. Per `.apply(...)` site: the arguments against forward's
 * signature (P2S110-113); per `.apply` routed through the runtime unresolved: a note (P2S300):
 * check_sites.c. What the checks read (the classes, each method's facts) and how they emit:
 * checker.c. p2s_check runs them all over a file and sorts what they found.
 *
 * A finding that leaves its owner as written (p2s_rules_leaves_as_written, and not hidden) marks
 * the class or site it was found for: such a class keeps its sites and gets no builder, and so
 * does every class derived from it (P2S301); an unresolved `.apply` stays too when one of them
 * is passed around in the file (P2S302).
 *
 * "Known" is always a bound every path agrees on: forward returns at most N tensors only when
 * every `return` is a literal tuple/list of N elements; backward returns at least N values
 * only when every `return` says so. A parameter, a call result or a name is never assumed to
 * be a Tensor without evidence (saved with save_for_backward, a gradient parameter, unpacked
 * from saved_tensor()). */
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_sites.h"
#include "checker.h"
#include "suppress.h"

#define CHECK_DEPTH 8            /* local base classes followed, like find.c's alias depth */
#define CHECK_UNKNOWN SIZE_MAX   /* a count that is not statically known */
#define CHECK_CALL_TEXT_MAX 60   /* longer calls are shown as `.numpy()` */

/* ---- classes ---- */

/* A base spelled like one of the rules' PyLayer bases (`PyLayer`, `paddle.autograd.PyLayer`). */
static bool check__is_root_base(const P2sChecker *ck, TSNode base)
{
    base = p2s_checker_unparen(base);
    uint32_t start = ts_node_start_byte(base), end = ts_node_end_byte(base);
    const char *text = ck->src->bytes + start;
    size_t len = end - start;
    const char *dot = memrchr(text, '.', len);
    const char *last = dot ? dot + 1 : text;
    size_t last_len = len - (size_t)(last - text);
    for (size_t i = 0; i < ck->rules->pylayer_bases.size; i++) {
        const char *qual = ck->rules->pylayer_bases.contents[i];
        const char *qdot = strrchr(qual, '.');
        const char *qlast = qdot ? qdot + 1 : qual;
        if ((strlen(qual) == len && memcmp(qual, text, len) == 0) ||
            (strlen(qlast) == last_len && memcmp(qlast, last, last_len) == 0))
            return true;
    }
    return false;
}

/* True when every base of the class, followed through local classes, is a root PyLayer base
 * or a local class: then nothing unseen can supply forward/backward. */
static bool check__bases_known(const P2sChecker *ck, size_t index, int depth)
{
    if (depth > CHECK_DEPTH)
        return false;
    TSNode bases = p2s_child(p2s_checker_class(ck, index)->node, P2S_FIELD_SUPERCLASSES);
    uint32_t n = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
    for (uint32_t k = 0; k < n; k++) {
        TSNode base = ts_node_named_child(bases, k);
        if (p2s_checker_type_is(base, P2S_KIND_COMMENT))
            continue;
        if (p2s_checker_type_is(base, P2S_KIND_KEYWORD_ARGUMENT))
            return false;   /* a metaclass can add anything */
        size_t local = p2s_checker_local_class(ck, base);
        if (local == index)
            return false;
        if (local != SIZE_MAX ? !check__bases_known(ck, local, depth + 1) : !check__is_root_base(ck, base))
            return false;
    }
    return true;
}

/* The class body binds name some other way than a def found by find.c (`forward = f`). */
static bool check__body_binds(const P2sChecker *ck, size_t index, const char *name, int depth)
{
    if (depth > CHECK_DEPTH)
        return false;
    const P2sPyLayerClass *cls = p2s_checker_class(ck, index);
    TSNode body = p2s_child(cls->node, P2S_FIELD_BODY);
    uint32_t n = ts_node_named_child_count(body);
    size_t len = strlen(name);
    for (uint32_t i = 0; i < n; i++) {
        TSNode stmt = ts_node_named_child(body, i);
        TSNode expr = p2s_checker_type_is(stmt, P2S_KIND_EXPRESSION_STATEMENT) ? ts_node_named_child(stmt, 0)
                                                                                : (TSNode){0};
        if (p2s_checker_type_is(expr, P2S_KIND_ASSIGNMENT) &&
            p2s_checker_text_is(ck, p2s_child(expr, P2S_FIELD_LEFT), name, len))
            return true;
    }
    TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
    uint32_t nb = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
    for (uint32_t k = 0; k < nb; k++) {
        size_t local = p2s_checker_local_class(ck, ts_node_named_child(bases, k));
        if (local != SIZE_MAX && local != index && check__body_binds(ck, local, name, depth + 1))
            return true;
    }
    return false;
}

static bool check__is_subclassed(const P2sChecker *ck, size_t index)
{
    return ck->subclassed.contents[index];
}

static bool check__is_applied(const P2sChecker *ck, size_t index)
{
    return ck->applied.contents[index];
}

/* P2S101 / P2S102. A class that defines neither and is not applied here is taken for an
 * abstract base; a subclassed one may leave the method to its subclasses. */
static void check__missing(P2sChecker *ck, size_t index, const char *cls_name)
{
    const P2sPyLayerClass *cls = p2s_checker_class(ck, index);
    bool has_f = p2s_node_present(cls->forward), has_b = p2s_node_present(cls->backward);
    if ((has_f && has_b) || check__is_subclassed(ck, index) || !check__bases_known(ck, index, 0))
        return;
    if (!has_f && !has_b && !check__is_applied(ck, index))
        return;
    const char *kv[] = {"class", cls_name};
    if (!has_f && !check__body_binds(ck, index, "forward", 0))
        p2s_checker_emit(ck, "P2S101", cls->name, kv, 1);
    if (!has_b && !check__body_binds(ck, index, "backward", 0))
        p2s_checker_emit(ck, "P2S102", cls->name, kv, 1);
}

/* P2S103 / P2S104 for a method the class defines itself (a base's are checked with the base). */
static void check__signature(P2sChecker *ck, size_t index, const P2sCheckMethod *m, const char *cls_name)
{
    if (!p2s_node_present(m->def) || m->owner != index)
        return;
    const char *kv[] = {"class", cls_name, "method", m->where};
    const P2sNodeList decs = m->decorators;
    bool is_static = false, is_classmethod = false;
    for (size_t i = 0; i < decs.size; i++) {
        is_static = is_static || p2s_checker_text_is(ck, decs.contents[i], "staticmethod", 12);
        is_classmethod = is_classmethod || p2s_checker_text_is(ck, decs.contents[i], "classmethod", 11);
    }
    /* Another decorator may well return a staticmethod: only the certain cases fire. */
    if (!is_static && (decs.size == 0 || is_classmethod))
        p2s_checker_emit(ck, "P2S103", p2s_node_span(p2s_child(m->def, P2S_FIELD_NAME)), kv, 2);
    if (!p2s_signature_receives_ctx(m->sig))
        p2s_checker_emit(ck, "P2S104", p2s_node_span(p2s_child(m->def, P2S_FIELD_PARAMETERS)), kv, 2);
}

/* ---- forward and backward together ---- */

/* The elements of a literal tuple / list return value, or false when the value is not one or
 * has a starred element (its length is then unknown). */
static bool check__literal_elements(TSNode value, P2sNodeList *out)
{
    value = p2s_checker_unparen(value);
    if (!p2s_checker_type_is(value, P2S_KIND_EXPRESSION_LIST) && !p2s_checker_type_is(value, P2S_KIND_TUPLE) &&
        !p2s_checker_type_is(value, P2S_KIND_LIST))
        return false;
    uint32_t n = ts_node_named_child_count(value);
    for (uint32_t i = 0; i < n; i++) {
        TSNode e = ts_node_named_child(value, i);
        if (p2s_checker_type_is(e, P2S_KIND_COMMENT))
            continue;
        if (p2s_checker_type_is(e, P2S_KIND_LIST_SPLAT) || p2s_checker_type_is(e, P2S_KIND_PARENTHESIZED_LIST_SPLAT))
            return false;
        array_push(out, e);
    }
    return true;
}

static bool check__is_float(TSNode node)
{
    return p2s_checker_type_is(p2s_checker_unparen(node), P2S_KIND_FLOAT);
}

/* A returned value that cannot be a tuple or list, so that it is one output (eager PyLayer
 * makes a slot of each item of a returned tuple or list, and of any other value one): a Tensor
 * by the evidence, a unary operation or comparison, or arithmetic that no sequence supports —
 * `+` and `*` concatenate and repeat sequences, so they count only with a float or a Tensor
 * operand. */
static bool check__one_value(const P2sChecker *ck, const P2sCheckMethod *f, TSNode value)
{
    value = p2s_checker_unparen(value);
    if (p2s_checker_type_is(value, P2S_KIND_UNARY_OPERATOR) ||
        p2s_checker_type_is(value, P2S_KIND_COMPARISON_OPERATOR) || p2s_checker_type_is(value, P2S_KIND_NOT_OPERATOR) ||
        p2s_checker_is_tensor_name(ck, f, value))
        return true;
    if (!p2s_checker_type_is(value, P2S_KIND_BINARY_OPERATOR))
        return false;
    TSNode op = p2s_child(value, P2S_FIELD_OPERATOR);
    if (!p2s_checker_text_is(ck, op, "+", 1) && !p2s_checker_text_is(ck, op, "*", 1))
        return true;
    TSNode left = p2s_checker_unparen(p2s_child(value, P2S_FIELD_LEFT));
    TSNode right = p2s_checker_unparen(p2s_child(value, P2S_FIELD_RIGHT));
    return check__is_float(left) || check__is_float(right) ||
           p2s_checker_is_tensor_name(ck, f, left) || p2s_checker_is_tensor_name(ck, f, right);
}

/* What forward's returns say of its outputs: the most any return can have (CHECK_UNKNOWN
 * unless every return is a literal or one value), the fewest certain Tensor outputs over all
 * returns, and the count when every return has the same one (the hover's "returns N"). */
typedef struct {
    size_t at_most, at_least, exactly;
} ForwardOutputs;

static ForwardOutputs check__forward_outputs(const P2sChecker *ck, const P2sCheckMethod *f)
{
    bool known = f->returns.size && !f->generator;
    ForwardOutputs out = {known ? 0 : CHECK_UNKNOWN, known ? CHECK_UNKNOWN : 0, CHECK_UNKNOWN};
    for (size_t i = 0; i < f->returns.size && !f->generator; i++) {
        TSNode value = ts_node_named_child(f->returns.contents[i], 0);
        P2sNodeList elems = {0};
        size_t most = CHECK_UNKNOWN, least = 0;
        if (ts_node_is_null(value)) {
            most = 0;
        } else if (check__literal_elements(value, &elems)) {
            most = elems.size;
            for (size_t k = 0; k < elems.size; k++)
                least += p2s_checker_is_tensor_name(ck, f, p2s_checker_unparen(elems.contents[k]));
        } else {
            most = check__one_value(ck, f, value) ? 1 : CHECK_UNKNOWN;
            least = p2s_checker_is_tensor_name(ck, f, p2s_checker_unparen(value));
        }
        array_delete(&elems);
        if (out.at_most != CHECK_UNKNOWN && (most == CHECK_UNKNOWN || most > out.at_most))
            out.at_most = most;
        if (least < out.at_least)
            out.at_least = least;
        out.exactly = i == 0 || most == out.exactly ? most : CHECK_UNKNOWN;
    }
    return out;
}

/* backward: the fewest values any return gives, or CHECK_UNKNOWN when some return's count is
 * not known; *first is the first return, for the span. */
static size_t check__backward_returns(const P2sChecker *ck, const P2sCheckMethod *b, TSNode *first)
{
    size_t fewest = CHECK_UNKNOWN;
    bool known = b->returns.size > 0 && !b->generator;
    for (size_t i = 0; i < b->returns.size && known; i++) {
        TSNode value = ts_node_named_child(b->returns.contents[i], 0);
        TSNode plain = p2s_checker_unparen(value);
        P2sNodeList elems = {0};
        size_t count = CHECK_UNKNOWN;
        /* A bare `return` is left unknown: it gives None, but is rarely what was meant. */
        if (ts_node_is_null(value))
            count = CHECK_UNKNOWN;
        else if (check__literal_elements(value, &elems))
            count = elems.size;
        else if (p2s_checker_type_is(plain, P2S_KIND_NONE) || p2s_checker_type_is(plain, P2S_KIND_BINARY_OPERATOR) ||
                 p2s_checker_type_is(plain, P2S_KIND_UNARY_OPERATOR) || p2s_checker_is_tensor_name(ck, b, plain))
            count = 1;
        array_delete(&elems);
        known = count != CHECK_UNKNOWN;
        if (count < fewest)
            fewest = count;
    }
    *first = b->returns.size ? b->returns.contents[0] : (TSNode){0};
    return known ? fewest : CHECK_UNKNOWN;
}

/* forward's inputs: one per parameter after ctx, unless *args / **kwargs take more. */
static size_t check__forward_inputs(const P2sSignature *sig)
{
    for (size_t i = 0; i < sig->params.size; i++)
        if (sig->params.contents[i].kind == P2S_PARAM_VAR_POSITIONAL || sig->params.contents[i].kind == P2S_PARAM_VAR_KEYWORD)
            return CHECK_UNKNOWN;
    return sig->params.size;
}

/* P2S105 / P2S106. */
static void check__counts(P2sChecker *ck, const P2sCheckMethod *f, const P2sCheckMethod *b, const P2sSignature *sig,
                          const ForwardOutputs *outputs, const char *cls_name)
{
    if (!p2s_checker_has_ctx(f) || !p2s_checker_has_ctx(b))
        return;
    size_t required = 0, accepted = 0;
    bool star = false;
    for (size_t i = 0; i < b->sig->params.size; i++) {
        const P2sParam *p = &b->sig->params.contents[i];
        star = star || p->kind == P2S_PARAM_VAR_POSITIONAL;
        if (p->kind == P2S_PARAM_POSITIONAL_ONLY || p->kind == P2S_PARAM_POSITIONAL_OR_KEYWORD) {
            accepted++;
            required += !p->has_default;
        }
    }
    size_t at_most = outputs->at_most, at_least = outputs->at_least;
    char given[48], expected[48];
    P2sSpan span = p2s_node_span(p2s_child(b->def, P2S_FIELD_PARAMETERS));
    if (at_most != CHECK_UNKNOWN && required > at_most) {
        snprintf(given, sizeof given, required == accepted && !star ? "%zu" : "at least %zu", required);
        snprintf(expected, sizeof expected, "at most %zu", at_most);
        const char *kv[] = {"class", cls_name, "given", given, "expected", expected};
        p2s_checker_emit(ck, "P2S105", span, kv, 3);
    } else if (!star && at_least != CHECK_UNKNOWN && at_least > accepted) {
        snprintf(given, sizeof given, required == accepted ? "%zu" : "at most %zu", accepted);
        snprintf(expected, sizeof expected, "at least %zu", at_least);
        const char *kv[] = {"class", cls_name, "given", given, "expected", expected};
        p2s_checker_emit(ck, "P2S105", span, kv, 3);
    }
    TSNode first = {0};
    size_t returned = check__backward_returns(ck, b, &first);
    size_t inputs = check__forward_inputs(sig);
    /* With no inputs nothing needs a gradient, so backward never runs. */
    if (returned != CHECK_UNKNOWN && inputs != CHECK_UNKNOWN && inputs > 0 && returned > inputs) {
        snprintf(given, sizeof given, "%zu", returned);
        snprintf(expected, sizeof expected, "%zu", inputs);
        const char *kv[] = {"class", cls_name, "given", given, "expected", expected};
        p2s_checker_emit(ck, "P2S106", p2s_node_span(ts_node_named_child(first, 0)), kv, 3);
    }
}

static void check__allowed_text(unsigned allowed, P2sStrbuf *out)
{
    if (allowed == (P2S_IN_FORWARD | P2S_IN_BACKWARD))
        p2s_strbuf_adds(out, "forward or backward");
    else
        p2s_strbuf_adds(out, allowed & P2S_IN_FORWARD ? "forward" : "backward");
}

/* P2S107 / P2S108 / P2S109. */
static void check__ctx_calls(P2sChecker *ck, const P2sCheckMethod *f, const P2sCheckMethod *b, const char *cls_name)
{
    const P2sCtxMethod *save = p2s_rules_ctx_role(ck->rules, P2S_CTX_SAVE);
    const P2sCheckMethod *both[] = {f, b};
    P2sStrbuf allowed, method;
    p2s_strbuf_init(&allowed);
    p2s_strbuf_init(&method);
    for (size_t w = 0; w < 2; w++) {
        const P2sCheckMethod *m = both[w];
        TSNode first_save = {0};
        for (size_t i = 0; i < m->ctx_calls.size; i++) {
            TSNode call = m->ctx_calls.contents[i];
            const P2sCtxMethod *cm = p2s_checker_ctx_call(ck, m, call);
            p2s_strbuf_reset(&allowed);
            p2s_strbuf_reset(&method);
            check__allowed_text(cm->allowed_in, &allowed);
            p2s_strbuf_adds(&method, cm->name);
            if (!(cm->allowed_in & m->bit)) {
                const char *kv[] = {"method", method.buf, "where", m->where, "allowed", allowed.buf};
                p2s_checker_emit(ck, "P2S108", p2s_node_span(call), kv, 3);
            }
            if (cm != save || m->bit != P2S_IN_FORWARD || !m->ctx_call_straight.contents[i])
                continue;
            if (ts_node_is_null(first_save)) {
                first_save = call;
                continue;
            }
            char line[24];
            snprintf(line, sizeof line, "%u", ts_node_start_point(first_save).row + 1);
            const char *kv[] = {"method", method.buf, "line", line};
            p2s_checker_emit(ck, "P2S109", p2s_node_span(call), kv, 2);
        }
    }
    /* backward loads what forward never saved: only when forward is fully visible (ctx never
     * leaves it, no decorator that could save) and no save is spelled anywhere in it. */
    if (save && p2s_checker_has_ctx(f) && !f->mentions_save &&
        !f->ctx_escapes && p2s_checker_only_staticmethod(ck, f)) {
        for (size_t i = 0; i < b->ctx_calls.size; i++) {
            const P2sCtxMethod *cm = p2s_checker_ctx_call(ck, b, b->ctx_calls.contents[i]);
            if (cm->role != P2S_CTX_LOAD)
                continue;
            const char *kv[] = {"class", cls_name, "method", cm->name, "save", save->name};
            p2s_checker_emit(ck, "P2S107", p2s_node_span(b->ctx_calls.contents[i]), kv, 3);
            break;
        }
    }
    p2s_strbuf_release(&allowed);
    p2s_strbuf_release(&method);
}

static void check__call_text(const P2sChecker *ck, TSNode call, const char *name, bool builtin, P2sStrbuf *out)
{
    uint32_t start = ts_node_start_byte(call), end = ts_node_end_byte(call);
    if (end - start <= CHECK_CALL_TEXT_MAX && !memchr(ck->src->bytes + start, '\n', end - start))
        p2s_strbuf_add(out, ck->src->bytes + start, end - start);
    else
        p2s_strbuf_addf(out, builtin ? "%s(...)" : ".%s()", name);
}

/* P2S2xx: calls that need a concrete value, anywhere inside forward/backward. */
static void check__hazards(P2sChecker *ck, const P2sCheckMethod *m)
{
    if (!p2s_node_present(m->def))
        return;
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    for (size_t i = 0; i < m->calls.size; i++) {
        TSNode call = m->calls.contents[i];
        TSNode fn = p2s_child(call, P2S_FIELD_FUNCTION), args = p2s_child(call, P2S_FIELD_ARGUMENTS);
        const P2sHazard *h = NULL;
        if (p2s_checker_type_is(fn, P2S_KIND_ATTRIBUTE)) {
            TSNode attr = p2s_child(fn, P2S_FIELD_ATTRIBUTE);
            h = p2s_rules_hazard(ck->rules, false, ck->src->bytes + ts_node_start_byte(attr),
                                 ts_node_end_byte(attr) - ts_node_start_byte(attr));
        } else if (p2s_checker_type_is(fn, P2S_KIND_IDENTIFIER) && p2s_checker_type_is(args, P2S_KIND_ARGUMENT_LIST) &&
                   ts_node_named_child_count(args) == 1) {
            /* float(t) only when t is certainly a Tensor: float(scale) on a number is fine. */
            TSNode arg = p2s_checker_unparen(ts_node_named_child(args, 0));
            if (p2s_checker_type_is(arg, P2S_KIND_SUBSCRIPT))
                arg = p2s_child(arg, P2S_FIELD_VALUE);
            if (p2s_checker_is_tensor_name(ck, m, arg))
                h = p2s_rules_hazard(ck->rules, true, ck->src->bytes + ts_node_start_byte(fn),
                                     ts_node_end_byte(fn) - ts_node_start_byte(fn));
        }
        if (!h)
            continue;
        p2s_strbuf_reset(&text);
        check__call_text(ck, call, h->name, h->builtin, &text);
        const char *kv[] = {"call", text.buf, "where", m->where};
        p2s_checker_emit(ck, h->code, p2s_node_span(call), kv, 2);
    }
    p2s_strbuf_release(&text);
}

static void check__pylayer(P2sChecker *ck, size_t index)
{
    ck->owner = &ck->found->classes.contents[index].as_written;
    P2sStrbuf name;
    p2s_strbuf_init(&name);
    p2s_checker_class_name(ck, index, &name);
    check__missing(ck, index, name.buf);
    const P2sCheckMethod *f = p2s_checker_method(ck, index, P2S_IN_FORWARD);
    const P2sCheckMethod *b = p2s_checker_method(ck, index, P2S_IN_BACKWARD);
    check__signature(ck, index, f, name.buf);
    check__signature(ck, index, b, name.buf);
    ForwardOutputs outputs = check__forward_outputs(ck, f);
    ck->found->classes.contents[index].forward_outputs = outputs.exactly;
    check__counts(ck, f, b, p2s_checker_class(ck, index)->signature, &outputs, name.buf);
    check__ctx_calls(ck, f, b, name.buf);
    check__hazards(ck, f);
    check__hazards(ck, b);
    p2s_strbuf_release(&name);
}

/* ---- the file ---- */

/* Source order, so the report reads top to bottom; stable, so one line's diagnostics keep the
 * order the checks produced them in. */
/* Where a diagnostic sorts: at its start, but a class's P2S301 at the class's end, so the note
 * follows the findings in the class that caused it. */
static size_t check__sort_key(const P2sChecker *ck, const P2sDiag *d)
{
    if (strcmp(d->code, "P2S301") != 0)
        return d->span.start;
    for (size_t i = 0; i < ck->found->classes.size; i++) {
        const P2sPyLayerClass *cls = &ck->found->classes.contents[i];
        if (cls->name.start == d->span.start)
            return ts_node_end_byte(cls->node);
    }
    return d->span.start;
}

static void check__sort(const P2sChecker *ck, P2sDiagSink *sink)
{
    size_t *keys = p2s_calloc(sink->items.size + 1, sizeof *keys);
    for (size_t i = 0; i < sink->items.size; i++)
        keys[i] = check__sort_key(ck, &sink->items.contents[i]);
    for (size_t i = 1; i < sink->items.size; i++) {
        P2sDiag d = sink->items.contents[i];
        size_t key = keys[i], k = i;
        for (; k > 0 && keys[k - 1] > key; k--) {
            sink->items.contents[k] = sink->items.contents[k - 1];
            keys[k] = keys[k - 1];
        }
        sink->items.contents[k] = d;
        keys[k] = key;
    }
    p2s_free(keys);
}

size_t p2s_check(const P2sSource *src, P2sFindings *found,
                 const P2sRules *rules, P2sDiagSink *sink)
{
    P2sDiagSink local;
    p2s_diag_sink_init(&local);
    P2sChecker ck;
    p2s_checker_init(&ck, src, found, rules, &local);
    for (size_t i = 0; i < found->classes.size; i++)
        if (found->classes.contents[i].is_pylayer)
            check__pylayer(&ck, i);
    p2s_check_note_as_written(&ck);
    p2s_check_inherit_as_written(&ck);
    size_t escaping = SIZE_MAX;
    for (size_t i = 0; i < found->sites.size; i++) {
        if (found->sites.contents[i].class_index == P2S_SITE_DYNAMIC) {
            escaping = p2s_check_escaping(&ck, found->sites.contents[i].attribute);
            break;
        }
    }
    for (size_t i = 0; i < found->sites.size; i++) {
        P2sApplySite *site = &found->sites.contents[i];
        if (site->class_index == P2S_SITE_DYNAMIC)
            p2s_check_dynamic_site(&ck, site, escaping);
        else
            p2s_check_site(&ck, site);
    }
    check__sort(&ck, &local);
    p2s_suppress_filter(&local, 0, src, rules);
    size_t errors = local.errors;
    p2s_diag_sink_move(sink, &local);
    p2s_checker_release(&ck);
    return errors;
}
