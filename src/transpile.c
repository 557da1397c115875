/* transpile.c — one source through the pipeline. */
#include "transpile.h"

#include "emit.h"
#include "parse.h"
#include "plan.h"

/* The output must parse as cleanly as the input did: anything else is our bug. */
static int transpile__verify(const P2sStrbuf *output, const char *name, P2sDiagSink *sink)
{
    P2sSource out_src;
    P2sDiagSink scratch;
    p2s_source_from_bytes(&out_src, name, output->buf, output->len);
    p2s_diag_sink_init(&scratch);
    TSTree *tree = p2s_parse(&out_src, &scratch);
    int rc = 0;
    if (scratch.errors > 0) {
        const P2sDiag *first = &scratch.items.contents[0];
        size_t line, col;
        p2s_source_position(&out_src, first->span.start, &line, &col);
        p2s_diag_emit_file(sink, P2S_ERROR, "P2S900",
                           "internal error: the transpiled output does not parse (%s at output line %zu:%zu); nothing was written; please report this input",
                           first->message, line, col);
        rc = -1;
    }
    ts_tree_delete(tree);
    p2s_diag_sink_release(&scratch);
    p2s_source_release(&out_src);
    return rc;
}

P2sTranspileStatus p2s_transpile(const P2sSource *src, const P2sRules *rules, P2sTranspileMode mode,
                                 P2sDiagSink *sink, P2sStrbuf *out, bool *changed)
{
    P2sTranspileStatus status = P2S_TRANSPILE_INPUT_ERROR;
    TSTree *tree = NULL;
    P2sFindings found = {0};
    P2sPlan plan;
    p2s_plan_init(&plan);
    *changed = false;

    if (p2s_source_validate(src, sink) < 0)
        goto done;
    size_t errors_before = sink->errors;
    tree = p2s_parse(src, sink);
    if (sink->errors > errors_before)
        goto done;
    if (mode == P2S_MODE_PARSE_ONLY) {
        p2s_strbuf_add(out, src->bytes, src->len);
        status = P2S_TRANSPILE_OK;
        goto done;
    }
    status = P2S_TRANSPILE_INTERNAL_ERROR;
    p2s_find(src, tree, rules, &found);
    if (p2s_plan_build(src, &found, sink, &plan) < 0)
        goto done;
    if (p2s_plan_is_empty(&plan)) {
        p2s_strbuf_add(out, src->bytes, src->len);
        status = P2S_TRANSPILE_OK;
        goto done;
    }
    P2sStrbuf result;
    p2s_strbuf_init(&result);
    p2s_emit(src, &plan, &result);
    if (transpile__verify(&result, src->name, sink) < 0) {
        p2s_strbuf_release(&result);
        goto done;
    }
    p2s_strbuf_add(out, result.buf, result.len);
    p2s_strbuf_release(&result);
    *changed = true;
    status = P2S_TRANSPILE_OK;
done:
    p2s_plan_release(&plan);
    p2s_findings_release(&found);
    if (tree)
        ts_tree_delete(tree);
    return status;
}
