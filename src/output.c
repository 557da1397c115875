/* output.c — atomic file output (after git's lockfile: temp + fsync + rename). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "io.h"

/* Pending renames per batch: the cleanup registry has 64 slots and a few stay free for
 * single writes (the depfile). */
#define OUTPUT_BATCH_MAX 56

static mode_t output__new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* The directory part of path ("." when there is none), for the temp file and the dir fsync. */
static void output__dirname(const char *path, P2sStrbuf *dir)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        p2s_strbuf_adds(dir, ".");
    else if (slash == path)
        p2s_strbuf_adds(dir, "/");
    else
        p2s_strbuf_add(dir, path, (size_t)(slash - path));
}

/* Syncs the directory of path: fsync of the directory (one file) or of its whole filesystem
 * (a batch). Failure is reported: a rename that may not survive a crash is not "written". */
static int output__sync_dir_of(const char *path, int whole_filesystem)
{
    P2sStrbuf dir;
    p2s_strbuf_init(&dir);
    output__dirname(path, &dir);
    int fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = -1;
    if (fd >= 0) {
        rc = whole_filesystem ? p2s_io_syncfs(fd) : p2s_io_fsync(fd);
        close(fd);
    }
    p2s_strbuf_release(&dir);
    return rc;
}

/* Writes bytes to a new temp file beside path (fsynced when `sync`). Returns 0 with the temp
 * file's name in temp and its cleanup slot in *slot; -1 with a reason, nothing left behind. */
static int output__write_temp(const char *path, const char *bytes, size_t len, int sync,
                              P2sStrbuf *temp, int *slot, P2sStrbuf *err)
{
    P2sStrbuf dir;
    p2s_strbuf_init(&dir);
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : output__new_file_mode();
    int rc = -1;
    output__dirname(path, &dir);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    p2s_strbuf_addf(temp, "%s/.%s.p2s-XXXXXX", dir.buf, base);
    int fd = p2s_io_mkstemp(temp->buf);
    *slot = -1;
    if (fd < 0) {
        p2s_strbuf_addf(err, "cannot create a temporary file in '%s': %s", dir.buf, strerror(errno));
        goto done;
    }
    *slot = p2s_cleanup_register(temp->buf);
    if (p2s_io_write_all(fd, bytes, len) < 0 || fchmod(fd, mode) < 0 || (sync && p2s_io_fsync(fd) < 0)) {
        p2s_strbuf_addf(err, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
        goto discard;
    }
    if (close(fd) < 0) {
        p2s_strbuf_addf(err, "cannot write '%s': %s", path, strerror(errno));
        goto discard;
    }
    rc = 0;
    goto done;
discard:
    unlink(temp->buf);
    p2s_cleanup_unregister(*slot);
    *slot = -1;
done:
    p2s_strbuf_release(&dir);
    return rc;
}

/* Renames temp over path; on failure the temp file is removed. Either way its slot is freed. */
static int output__commit(const char *temp, const char *path, int slot, P2sStrbuf *err)
{
    int rc = 0;
    if (p2s_io_rename(temp, path) < 0) {
        p2s_strbuf_addf(err, "cannot replace '%s': %s", path, strerror(errno));
        unlink(temp);
        rc = -1;
    }
    p2s_cleanup_unregister(slot);
    return rc;
}

int p2s_output_write_file(const char *path, const char *bytes, size_t len, P2sStrbuf *err)
{
    P2sStrbuf temp;
    p2s_strbuf_init(&temp);
    int slot;
    int rc = output__write_temp(path, bytes, len, 1, &temp, &slot, err);
    if (rc == 0)
        rc = output__commit(temp.buf, path, slot, err);
    if (rc == 0 && output__sync_dir_of(path, 0) < 0) {
        p2s_strbuf_addf(err, "cannot sync the directory of '%s': %s", path, strerror(errno));
        rc = -1;
    }
    p2s_strbuf_release(&temp);
    return rc;
}

int p2s_output_write_fd(int fd, const char *name, const char *bytes, size_t len, P2sStrbuf *err)
{
    if (p2s_io_write_all(fd, bytes, len) < 0) {
        p2s_strbuf_addf(err, "cannot write %s: %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

void p2s_output_batch_init(P2sOutputBatch *self)
{
    memset(self, 0, sizeof *self);
}

int p2s_output_batch_write(P2sOutputBatch *self, const char *path, const char *bytes, size_t len,
                           P2sStrbuf *err)
{
    if (self->pending.size >= OUTPUT_BATCH_MAX && p2s_output_batch_flush(self, err) < 0)
        return -1;
    P2sStrbuf temp;
    p2s_strbuf_init(&temp);
    P2sPendingOutput p = {0};
    if (output__write_temp(path, bytes, len, 0, &temp, &p.slot, err) < 0) {
        p2s_strbuf_release(&temp);
        return -1;
    }
    p.temp = p2s_strbuf_detach(&temp, NULL);
    p.dest = p2s_strdup(path);
    array_push(&self->pending, p);
    return 0;
}

static void output__pending_free(P2sPendingOutput *p)
{
    p2s_free(p->temp);
    p2s_free(p->dest);
}

int p2s_output_batch_flush(P2sOutputBatch *self, P2sStrbuf *err)
{
    int rc = 0;
    if (self->pending.size == 0)
        return 0;
    /* One sync makes every temp file's data durable before any rename exposes it. */
    if (output__sync_dir_of(self->pending.contents[0].dest, 1) < 0) {
        p2s_strbuf_addf(err, "cannot sync the output: %s", strerror(errno));
        p2s_output_batch_release(self);
        return -1;
    }
    for (size_t i = 0; i < self->pending.size; i++) {
        P2sPendingOutput *p = &self->pending.contents[i];
        if (output__commit(p->temp, p->dest, p->slot, err) < 0) {
            p2s_strbuf_addch(err, '\n');
            rc = -1;
        }
    }
    /* And one more makes the renames durable. */
    if (output__sync_dir_of(self->pending.contents[0].dest, 1) < 0 && rc == 0) {
        p2s_strbuf_addf(err, "cannot sync the output: %s", strerror(errno));
        rc = -1;
    }
    for (size_t i = 0; i < self->pending.size; i++)
        output__pending_free(&self->pending.contents[i]);
    self->pending.size = 0;
    return rc;
}

void p2s_output_batch_release(P2sOutputBatch *self)
{
    for (size_t i = 0; i < self->pending.size; i++) {
        P2sPendingOutput *p = &self->pending.contents[i];
        unlink(p->temp);
        p2s_cleanup_unregister(p->slot);
        output__pending_free(p);
    }
    array_delete(&self->pending);
}
