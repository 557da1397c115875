/* deliver.c — writing, checking, diffing and listing one result. */
#include "deliver.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff.h"
#include "parse.h"

/* Reads dest; 1 when it exists, 0 when it does not or is no regular file (a device or FIFO
 * is written to, never read back: that could block), -1 on another error (reason in err). */
static int deliver__read_existing(const char *dest, P2sStrbuf *content, P2sStrbuf *err)
{
    struct stat st;
    if (stat(dest, &st) == 0 && !S_ISREG(st.st_mode))
        return 0;
    int fd = open(dest, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        p2s_strbuf_addf(err, "cannot read '%s': %s", dest, strerror(errno));
        return -1;
    }
    P2sDiagSink sink;
    P2sSource src;
    p2s_diag_sink_init(&sink);
    int rc = p2s_source_read_fd(&src, fd, dest, P2S_SOURCE_LIMIT, &sink);
    close(fd);
    if (rc < 0) {
        p2s_strbuf_addf(err, "'%s': %s", dest, sink.items.contents[0].message);
    } else {
        p2s_strbuf_add(content, src.bytes, src.len);
        p2s_source_release(&src);
        rc = 1;
    }
    p2s_diag_sink_release(&sink);
    return rc;
}

P2sDeliverStatus p2s_deliver(const P2sOptions *opts, const char *dest, const P2sSource *input,
                             const char *bytes, size_t len, FILE *diff_stream, P2sOutputBatch *batch,
                             P2sStrbuf *err)
{
    bool to_stdout = !dest || strcmp(dest, "-") == 0;
    P2sStrbuf old;
    p2s_strbuf_init(&old);
    P2sDeliverStatus status = P2S_DELIVER_DONE;

    if (to_stdout && !opts->check && !opts->diff) {
        if (p2s_output_write_fd(STDOUT_FILENO, "standard output", bytes, len, err) < 0)
            status = P2S_DELIVER_IO_ERROR;
        goto done;
    }
    const char *label = to_stdout ? input->name : dest;
    int exists = 1;
    if (to_stdout)
        p2s_strbuf_add(&old, input->bytes, input->len);
    else
        exists = deliver__read_existing(dest, &old, err);
    if (exists < 0) {
        status = P2S_DELIVER_IO_ERROR;
        goto done;
    }
    bool same = exists && old.len == len && memcmp(old.buf, bytes, len) == 0;
    if (opts->check || opts->diff) {
        if (opts->diff && !same) {
            P2sStrbuf diff;
            p2s_strbuf_init(&diff);
            p2s_diff_unified(old.buf, old.len, bytes, len, exists ? label : "/dev/null", label, &diff);
            fwrite(diff.buf, 1, diff.len, diff_stream);
            fflush(diff_stream);
            p2s_strbuf_release(&diff);
        }
        if (opts->check && !same) {
            fprintf(stderr, "pylayer2static: would %s %s\n", exists ? "rewrite" : "create", label);
            status = P2S_DELIVER_STALE;
        }
        goto done;
    }
    /* Already what we would write: leave it, and its mtime, alone. */
    if (!same && (batch ? p2s_output_batch_write(batch, dest, bytes, len, err)
                        : p2s_output_write_file(dest, bytes, len, err)) < 0)
        status = P2S_DELIVER_IO_ERROR;
done:
    p2s_strbuf_release(&old);
    return status;
}

#define DELIVER_AS_WRITTEN " (left as written)"

/* Where offset of the unit's source is in the file as given (untranspile.h). */
static void deliver__position(const P2sUnit *unit, size_t offset, size_t *line, size_t *col)
{
    if (unit->input)
        p2s_source_position(unit->input, p2s_untranspile_map_back(&unit->undo, offset, false), line, col);
    else
        p2s_source_position(unit->src, offset, line, col);
}

void p2s_deliver_list(const char *name, const P2sUnit *unit, FILE *stream)
{
    const P2sSource *src = unit->src;
    const P2sFindings *found = &unit->found;
    size_t c = 0, s = 0;
    for (;;) {
        while (c < found->classes.size && !found->classes.contents[c].is_pylayer)
            c++;
        bool have_class = c < found->classes.size, have_site = s < found->sites.size;
        if (!have_class && !have_site)
            break;
        size_t class_at = have_class ? found->classes.contents[c].name.start : SIZE_MAX;
        size_t site_at = have_site ? ts_node_start_byte(found->sites.contents[s].attribute) : SIZE_MAX;
        size_t line, col;
        if (class_at < site_at) {
            const P2sPyLayerClass *cls = &found->classes.contents[c++];
            deliver__position(unit, class_at, &line, &col);
            if (cls->qualname)
                fprintf(stream, "%s:%zu:%zu class %s%s\n", name, line, col, cls->qualname,
                        cls->as_written ? DELIVER_AS_WRITTEN : "");
            else
                fprintf(stream, "%s:%zu:%zu class %.*s%s\n", name, line, col,
                        (int)(cls->name.end - cls->name.start), src->bytes + cls->name.start,
                        cls->as_written ? DELIVER_AS_WRITTEN : "");
        } else {
            const P2sApplySite *site = &found->sites.contents[s++];
            P2sSpan o = p2s_node_span(p2s_child(site->attribute, P2S_FIELD_OBJECT));
            deliver__position(unit, site_at, &line, &col);
            fprintf(stream, "%s:%zu:%zu apply %.*s%s\n", name, line, col, (int)(o.end - o.start),
                    src->bytes + o.start, site->as_written ? DELIVER_AS_WRITTEN : "");
        }
    }
}
