/* lsp_features.c — diagnostics, code actions, hover and symbols over one analysis. */
#include "lsp_features.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "lsp_text.h"
#include "parse.h"
#include "signature.h"

#define FEATURES_TEXT_MAX 60    /* longer argument texts are cut, with an ellipsis */

cJSON *p2s_lsp_range(const P2sSource *src, size_t start, size_t end)
{
    P2sLspPosition a = p2s_lsp_position(src, start), b = p2s_lsp_position(src, end);
    cJSON *range = cJSON_CreateObject();
    cJSON *s = cJSON_AddObjectToObject(range, "start");
    cJSON_AddNumberToObject(s, "line", a.line);
    cJSON_AddNumberToObject(s, "character", a.character);
    cJSON *e = cJSON_AddObjectToObject(range, "end");
    cJSON_AddNumberToObject(e, "line", b.line);
    cJSON_AddNumberToObject(e, "character", b.character);
    return range;
}

static int features__severity(P2sSeverity severity)
{
    switch (severity) {
    case P2S_ERROR: return 1;
    case P2S_WARNING: return 2;
    case P2S_NOTE: return 3;
    }
    return 1;
}

static cJSON *features__diagnostic(const P2sSource *src, const P2sDiag *d)
{
    cJSON *obj = cJSON_CreateObject();
    size_t start = d->has_span ? d->span.start : 0, end = d->has_span ? d->span.end : 0;
    cJSON_AddItemToObject(obj, "range", p2s_lsp_range(src, start, end));
    cJSON_AddNumberToObject(obj, "severity", features__severity(d->severity));
    if (d->code[0])
        cJSON_AddStringToObject(obj, "code", d->code);
    cJSON_AddStringToObject(obj, "source", P2S_LSP_SOURCE);
    if (d->fix) {
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_addf(&text, "%s\nhelp: %s", d->message, d->fix);
        cJSON_AddStringToObject(obj, "message", text.buf);
        p2s_strbuf_release(&text);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(obj, "data"), "fix", d->fix);
    } else {
        cJSON_AddStringToObject(obj, "message", d->message);
    }
    return obj;
}

cJSON *p2s_lsp_diagnostics(const P2sSource *src, const P2sDiagSink *sink)
{
    cJSON *array = cJSON_CreateArray();
    for (size_t i = 0; i < sink->items.size; i++)
        cJSON_AddItemToArray(array, features__diagnostic(src, &sink->items.contents[i]));
    return array;
}

/* ---- code actions ---- */

static cJSON *features__text_edit(const P2sSource *src, size_t start, size_t end, const char *text)
{
    cJSON *edit = cJSON_CreateObject();
    cJSON_AddItemToObject(edit, "range", p2s_lsp_range(src, start, end));
    cJSON_AddStringToObject(edit, "newText", text);
    return edit;
}

static void features__add_fix(cJSON *actions, const char *uri, const P2sSource *src, const P2sDiag *d,
                              const char *title, bool preferred, size_t at, const char *text)
{
    cJSON *action = cJSON_CreateObject();
    cJSON_AddStringToObject(action, "title", title);
    cJSON_AddStringToObject(action, "kind", "quickfix");
    cJSON *diags = cJSON_AddArrayToObject(action, "diagnostics");
    cJSON_AddItemToArray(diags, features__diagnostic(src, d));
    if (preferred)
        cJSON_AddTrueToObject(action, "isPreferred");
    cJSON *changes = cJSON_AddObjectToObject(cJSON_AddObjectToObject(action, "edit"), "changes");
    cJSON *edits = cJSON_AddArrayToObject(changes, uri);
    cJSON_AddItemToArray(edits, features__text_edit(src, at, at, text));
    cJSON_AddItemToArray(actions, action);
}

static TSNode features__enclosing(TSNode node, const char *type)
{
    while (!ts_node_is_null(node) && strcmp(ts_node_type(node), type) != 0)
        node = ts_node_parent(node);
    return node;
}

/* P2S103: `@staticmethod` on a line of its own above the method (above its decorators). */
static void features__fix_staticmethod(cJSON *actions, const char *uri, const P2sSource *src, TSTree *tree,
                                       const P2sDiag *d)
{
    TSNode at = ts_node_descendant_for_byte_range(ts_tree_root_node(tree), (uint32_t)d->span.start,
                                                  (uint32_t)d->span.end);
    TSNode def = features__enclosing(at, "function_definition");
    if (ts_node_is_null(def))
        return;
    TSNode parent = ts_node_parent(def);
    TSNode first = !ts_node_is_null(parent) && strcmp(ts_node_type(parent), "decorated_definition") == 0 ? parent : def;
    size_t start = ts_node_start_byte(first), line_start = start;
    while (line_start > 0 && src->bytes[line_start - 1] != '\n' && src->bytes[line_start - 1] != '\r')
        line_start--;
    for (size_t i = line_start; i < start; i++)
        if (src->bytes[i] != ' ' && src->bytes[i] != '\t')
            return;  /* not at the start of its line: `class A: def f(...)` */
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    const char *eol = memchr(src->bytes + line_start, '\r', src->len - line_start) &&
                              strstr(src->bytes, "\r\n") ? "\r\n" : "\n";
    p2s_strbuf_addf(&text, "@staticmethod%s%.*s", eol, (int)(start - line_start), src->bytes + line_start);
    features__add_fix(actions, uri, src, d, "Add @staticmethod", true, start, text.buf);
    p2s_strbuf_release(&text);
}

/* P2S104: `ctx` as the first parameter. */
static void features__fix_ctx(cJSON *actions, const char *uri, const P2sSource *src, TSTree *tree, const P2sDiag *d)
{
    TSNode params = ts_node_descendant_for_byte_range(ts_tree_root_node(tree), (uint32_t)d->span.start,
                                                      (uint32_t)d->span.end);
    params = features__enclosing(params, "parameters");
    if (ts_node_is_null(params) || ts_node_start_byte(params) >= src->len || src->bytes[ts_node_start_byte(params)] != '(')
        return;
    const char *text = p2s_signature_param_count(params) > 0 ? "ctx, " : "ctx";
    features__add_fix(actions, uri, src, d, "Add `ctx` as the first parameter", true, ts_node_start_byte(params) + 1, text);
}

/* `# noqa: CODE` on the diagnostic's line, or CODE added to the line's noqa list. */
static void features__fix_noqa(cJSON *actions, const char *uri, const P2sSource *src, TSTree *tree, const P2sDiag *d)
{
    size_t line, col;
    p2s_source_position(src, d->span.start, &line, &col);
    P2sSpan span = p2s_source_line_span(src, line);
    const char *p = src->bytes + span.start, *end = src->bytes + span.end;
    if (span.end > span.start && end[-1] == '\\')
        return;  /* a comment after a line continuation would break it */
    if (tree) {  /* the line ends inside a string: a comment cannot go there */
        TSNode last = ts_node_descendant_for_byte_range(ts_tree_root_node(tree), (uint32_t)span.end,
                                                        (uint32_t)span.end);
        for (TSNode n = last; !ts_node_is_null(n); n = ts_node_parent(n))
            if (strcmp(ts_node_type(n), "string") == 0 && ts_node_start_byte(n) < span.end &&
                ts_node_end_byte(n) > span.end)
                return;
    }
    P2sStrbuf title, text;
    p2s_strbuf_init(&title);
    p2s_strbuf_init(&text);
    p2s_strbuf_addf(&title, "Ignore %s on this line (# noqa)", d->code);
    size_t at = span.end;
    for (const char *h = p; h < end; h++) {
        if (*h != '#')
            continue;
        const char *q = h + 1;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (end - q >= 5 && strncasecmp(q, "noqa:", 5) == 0) {
            q += 5;
            const char *last_code = NULL;
            for (;;) {
                while (q < end && (*q == ' ' || *q == '\t' || *q == ','))
                    q++;
                const char *c = q;
                while (q < end && isalnum((unsigned char)*q))
                    q++;
                if (q == c)
                    break;
                last_code = q;
            }
            if (last_code) {
                at = (size_t)(last_code - src->bytes);
                p2s_strbuf_addf(&text, ", %s", d->code);
            }
            break;
        }
    }
    if (!text.len)
        p2s_strbuf_addf(&text, "  # noqa: %s", d->code);
    features__add_fix(actions, uri, src, d, title.buf, false, at, text.buf);
    p2s_strbuf_release(&title);
    p2s_strbuf_release(&text);
}

cJSON *p2s_lsp_code_actions(const char *uri, const P2sSource *src, TSTree *tree, const P2sDiagSink *sink,
                            const P2sRules *rules, size_t start, size_t end, bool offer_static_form)
{
    cJSON *actions = cJSON_CreateArray();
    for (size_t i = 0; i < sink->items.size; i++) {
        const P2sDiag *d = &sink->items.contents[i];
        if (!d->has_span || d->span.end < start || d->span.start > end || !d->code[0])
            continue;
        if (tree && strcmp(d->code, "P2S103") == 0)
            features__fix_staticmethod(actions, uri, src, tree, d);
        else if (tree && strcmp(d->code, "P2S104") == 0)
            features__fix_ctx(actions, uri, src, tree, d);
        const P2sRuleDiag *rule = p2s_rules_diag(rules, d->code);
        if (rule && rule->configurable)
            features__fix_noqa(actions, uri, src, tree, d);
    }
    if (offer_static_form) {
        cJSON *action = cJSON_CreateObject();
        cJSON_AddStringToObject(action, "title", "Show static form (pylayer2static)");
        cJSON_AddStringToObject(action, "kind", "source");
        cJSON *command = cJSON_AddObjectToObject(action, "command");
        cJSON_AddStringToObject(command, "title", "Show static form");
        cJSON_AddStringToObject(command, "command", P2S_LSP_CMD_STATIC_FORM);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(command, "arguments"), cJSON_CreateString(uri));
        cJSON_AddItemToArray(actions, action);
    }
    return actions;
}

/* ---- hover and symbols ---- */

/* A node's text on one line (whitespace runs become one space), cut at max bytes. */
static void features__flat(const P2sSource *src, TSNode node, size_t max, P2sStrbuf *out)
{
    size_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    bool space = false;
    size_t written = 0;
    for (size_t i = start; i < end && i < src->len; i++) {
        char c = src->bytes[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\') {
            space = written > 0;
            continue;
        }
        if (written >= max && ((unsigned char)c & 0xC0) != 0x80) {
            p2s_strbuf_adds(out, "…");
            return;
        }
        if (space && c != ')' && c != ']' && out->len && out->buf[out->len - 1] != '(' && out->buf[out->len - 1] != '[')
            p2s_strbuf_addch(out, ' ');
        space = false;
        p2s_strbuf_addch(out, c);
        written++;
    }
}

static void features__code(P2sStrbuf *out, const char *text)
{
    const char *fence = strchr(text, '`') ? "``" : "`";
    p2s_strbuf_addf(out, "%s%s%s%s%s", fence, *fence && fence[1] ? " " : "", text, *fence && fence[1] ? " " : "", fence);
}

static char *features__node_text(const P2sSource *src, TSNode node)
{
    size_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);
    if (e > src->len)
        e = src->len;
    return p2s_strndup(src->bytes + (s < e ? s : e), e > s ? e - s : 0);
}

/* A parameter as the hover names it: `x`, `*args`, `**kwargs`. */
static void features__param_name(const P2sSignature *sig, size_t index, P2sStrbuf *out)
{
    const P2sParam *p = &sig->params.contents[index];
    p2s_strbuf_addf(out, "%s%.*s", p->kind == P2S_PARAM_VAR_POSITIONAL ? "*" : p->kind == P2S_PARAM_VAR_KEYWORD ? "**" : "",
                    (int)(p->name.end - p->name.start), sig->text + p->name.start);
}

void p2s_lsp_class_summary(const P2sSource *src, const P2sFindings *found, size_t index,
                           const char *module, P2sStrbuf *out)
{
    const P2sPyLayerClass *cls = &found->classes.contents[index];
    const P2sSignature *sig = cls->signature;
    size_t line, col;
    p2s_source_position(src, cls->name.start, &line, &col);
    p2s_strbuf_addf(out, "**PyLayer `%.*s`**", (int)(cls->name.end - cls->name.start), src->bytes + cls->name.start);
    if (module)
        p2s_strbuf_addf(out, " — module `%s`, line %zu", module, line);
    else
        p2s_strbuf_addf(out, " — line %zu", line);
    p2s_strbuf_adds(out, "\n\n```python\n");
    if (sig)
        p2s_strbuf_addf(out, "def forward(%s)\n", sig->text);
    if (cls->backward_signature)
        p2s_strbuf_addf(out, "def backward(%s)\n", cls->backward_signature->text);
    p2s_strbuf_adds(out, "```\n");
    if (!sig) {
        p2s_strbuf_adds(out, "\nNo `forward` found.\n");
        if (cls->as_written)
            p2s_strbuf_adds(out, "\n**Static graph:** none: the class is left as written (a contract error of it "
                                 "or of a base, see its diagnostics), so its `.apply` calls are not rewritten\n");
        return;
    }
    p2s_strbuf_adds(out, "\n**Tensor slots:** each argument after `ctx`");
    for (size_t i = 0; i < sig->params.size; i++) {
        p2s_strbuf_adds(out, i ? ", `" : " (`");
        features__param_name(sig, i, out);
        p2s_strbuf_adds(out, i + 1 == sig->params.size ? "`)" : "`");
    }
    p2s_strbuf_adds(out, " that is a Tensor when called (at the top level: not inside a list or dict) becomes "
                         "one input of the static `pylayer` op, in order; every other argument is passed to "
                         "`forward` as it is.\n");
    size_t outputs = cls->forward_outputs;
    p2s_strbuf_adds(out, "\n**backward** receives one gradient per Tensor that `forward` returns");
    if (outputs != P2S_COUNT_UNKNOWN)
        p2s_strbuf_addf(out, " (`forward` returns %zu value%s)", outputs, outputs == 1 ? "" : "s");
    p2s_strbuf_adds(out, ", and must return one gradient per tensor slot, in order (`None` for an input "
                         "that needs none).\n");
    p2s_strbuf_addf(out, "\n**Static graph:** %s\n",
                    cls->as_written ? "none: the class is left as written (a contract error, see its diagnostics), "
                                      "so its `.apply` calls are not rewritten and eager mode and the framework's own "
                                      "`to_static` run it"
                    : cls->builder ? "a generated builder constructs the op"
                                   : "the runtime's generic path constructs the op (no generated builder for this class)");
}

/* "This call": each argument and where forward's signature binds it (signature.c). */
static void features__bindings(const P2sSource *src, const P2sSignature *sig, TSNode call, P2sStrbuf *out)
{
    TSNode args = p2s_child(call, P2S_FIELD_ARGUMENTS);
    if (p2s_kind(args) != P2S_KIND_ARGUMENT_LIST || !sig)
        return;
    P2sBinding binding;
    p2s_bind(src, sig, args, &binding);
    p2s_strbuf_adds(out, "\n**This call:**\n");
    P2sStrbuf value, target;
    p2s_strbuf_init(&value);
    p2s_strbuf_init(&target);
    for (size_t i = 0; i < binding.arguments.size; i++) {
        const P2sBoundArgument *arg = &binding.arguments.contents[i];
        TSNode a = arg->argument, key = {0};
        p2s_strbuf_reset(&value);
        p2s_strbuf_reset(&target);
        if (p2s_kind(a) == P2S_KIND_KEYWORD_ARGUMENT) {
            key = p2s_child(a, P2S_FIELD_NAME);
            a = p2s_child(a, P2S_FIELD_VALUE);
        }
        char *key_text = ts_node_is_null(key) ? p2s_strdup("?") : features__node_text(src, key);
        switch (arg->kind) {
        case P2S_BOUND_PARAM:
        case P2S_BOUND_VAR_POSITIONAL:
        case P2S_BOUND_DUPLICATE:
            features__param_name(sig, arg->param, &target);
            break;
        case P2S_BOUND_VAR_KEYWORD:
            features__param_name(sig, arg->param, &target);
            p2s_strbuf_addf(&target, "['%s']", key_text);
            break;
        case P2S_BOUND_UNPACKED:
            p2s_strbuf_adds(&target, "(unpacked at run time)");
            break;
        case P2S_BOUND_AFTER_UNPACKED:
            p2s_strbuf_adds(&target, "(after an unpacked argument: known at run time)");
            break;
        case P2S_BOUND_EXTRA:
            p2s_strbuf_adds(&target, "(no parameter)");
            break;
        case P2S_BOUND_NO_KEYWORD:
            p2s_strbuf_adds(&target, key_text);
            break;
        }
        p2s_free(key_text);
        if (!ts_node_is_null(a))
            features__flat(src, a, FEATURES_TEXT_MAX, &value);
        p2s_strbuf_adds(out, "- ");
        features__code(out, target.buf);
        p2s_strbuf_adds(out, " ← ");
        features__code(out, value.buf);
        p2s_strbuf_addch(out, '\n');
    }
    if (!binding.arguments.size)
        p2s_strbuf_adds(out, "- no arguments\n");
    p2s_strbuf_release(&value);
    p2s_strbuf_release(&target);
    p2s_binding_release(&binding);
}

cJSON *p2s_lsp_hover(const P2sSource *src, const P2sFindings *found, size_t offset,
                     P2sLspSummaryLookup external_summary, void *ctx)
{
    const P2sApplySite *site = NULL;
    for (size_t i = 0; i < found->sites.size && !site; i++) {
        TSNode attr = found->sites.contents[i].attribute;
        if (ts_node_start_byte(attr) <= offset && offset <= ts_node_end_byte(attr))
            site = &found->sites.contents[i];
    }
    if (!site)
        return NULL;
    TSNode attr = site->attribute, object = p2s_child(attr, P2S_FIELD_OBJECT);
    P2sStrbuf text, object_text;
    p2s_strbuf_init(&text);
    p2s_strbuf_init(&object_text);
    if (!ts_node_is_null(object))
        features__flat(src, object, 200, &object_text);
    if (site->class_index < found->classes.size) {
        p2s_lsp_class_summary(src, found, site->class_index, NULL, &text);
        if (p2s_node_present(site->call))
            features__bindings(src, site->signature, site->call, &text);
    } else if (site->class_index == P2S_SITE_EXTERNAL) {
        /* The class by the qualified name the site resolved to (find.c keeps it on the site). */
        const char *summary = NULL;
        if (site->external < found->externals_used.size && external_summary)
            summary = external_summary(ctx, found->externals_used.contents[site->external]);
        if (summary)
            p2s_strbuf_adds(&text, summary);
        else
            p2s_strbuf_addf(&text, "**PyLayer `%s`** from another module of the workspace\n", object_text.buf);
        if (p2s_node_present(site->call))
            features__bindings(src, site->signature, site->call, &text);
    } else if (site->as_written) {
        p2s_strbuf_addf(&text, "`%s.apply` does not resolve to a PyLayer class here, and a class left as written "
                               "may reach it: the call is left as written (P2S302).\n", object_text.buf);
    } else {
        p2s_strbuf_addf(&text, "`%s.apply` does not resolve to a PyLayer class here: the call goes through "
                               "`pylayer2static_runtime`, which decides when it runs (a class that is no PyLayer "
                               "keeps its own `apply`).\n", object_text.buf);
    }
    if (site->as_written && site->class_index != P2S_SITE_DYNAMIC &&
        !(site->class_index < found->classes.size && found->classes.contents[site->class_index].as_written))
        p2s_strbuf_adds(&text, "\n**This call** is left as written: its arguments do not match `forward`, or its "
                               "class is left as written in its module.\n");
    cJSON *hover = cJSON_CreateObject();
    cJSON *contents = cJSON_AddObjectToObject(hover, "contents");
    cJSON_AddStringToObject(contents, "kind", "markdown");
    cJSON_AddStringToObject(contents, "value", text.buf);
    cJSON_AddItemToObject(hover, "range", p2s_lsp_range(src, ts_node_start_byte(attr), ts_node_end_byte(attr)));
    p2s_strbuf_release(&text);
    p2s_strbuf_release(&object_text);
    return hover;
}

static cJSON *features__symbol(const P2sSource *src, const char *name, const char *detail, int kind, TSNode node, P2sSpan sel)
{
    cJSON *sym = cJSON_CreateObject();
    cJSON_AddStringToObject(sym, "name", name);
    if (detail)
        cJSON_AddStringToObject(sym, "detail", detail);
    cJSON_AddNumberToObject(sym, "kind", kind);
    cJSON_AddItemToObject(sym, "range", p2s_lsp_range(src, ts_node_start_byte(node), ts_node_end_byte(node)));
    cJSON_AddItemToObject(sym, "selectionRange", p2s_lsp_range(src, sel.start, sel.end));
    return sym;
}

static void features__method_symbol(const P2sSource *src, const P2sPyLayerClass *cls, TSNode def,
                                    const P2sSignature *sig, cJSON *children)
{
    if (!p2s_node_present(def) || ts_node_start_byte(def) < ts_node_start_byte(cls->node) ||
        ts_node_end_byte(def) > ts_node_end_byte(cls->node))
        return;  /* inherited from a base: listed there */
    TSNode name = p2s_child(def, P2S_FIELD_NAME);
    if (ts_node_is_null(name))
        return;
    char *text = features__node_text(src, name);
    P2sStrbuf detail;
    p2s_strbuf_init(&detail);
    p2s_strbuf_addf(&detail, "(%s)", sig->text);
    cJSON_AddItemToArray(children, features__symbol(src, text, detail.buf, 6 /* Method */, def, p2s_node_span(name)));
    p2s_strbuf_release(&detail);
    p2s_free(text);
}

cJSON *p2s_lsp_symbols(const P2sSource *src, const P2sFindings *found)
{
    cJSON *symbols = cJSON_CreateArray();
    for (size_t i = 0; i < found->classes.size; i++) {
        const P2sPyLayerClass *cls = &found->classes.contents[i];
        if (!cls->is_pylayer)
            continue;
        char *name = p2s_strndup(src->bytes + cls->name.start, cls->name.end - cls->name.start);
        cJSON *sym = features__symbol(src, name, "PyLayer", 5 /* Class */, cls->node, cls->name);
        cJSON *children = cJSON_AddArrayToObject(sym, "children");
        features__method_symbol(src, cls, cls->forward, cls->signature, children);
        features__method_symbol(src, cls, cls->backward, cls->backward_signature, children);
        cJSON_AddItemToArray(symbols, sym);
        p2s_free(name);
    }
    return symbols;
}
