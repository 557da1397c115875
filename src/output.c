/* output.c — atomic file output (after git's lockfile: temp + fsync + rename). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "io.h"

/* Pending renames per batch written through p2s_output_batch_write: well below the cleanup
 * registry's slots (alloc.h), which batches written on several threads share. */
#define OUTPUT_BATCH_MAX 56

/* umask can only be read by setting it, and it is the process's: two workers reading it at
 * once could each see the other's 0 (and leave it set). So it is read once, for every thread. */
static mode_t output__umask;
static pthread_once_t output__umask_once = PTHREAD_ONCE_INIT;

static void output__read_umask(void)
{
    output__umask = umask(0);
    umask(output__umask);
}

static mode_t output__new_file_mode(void)
{
    pthread_once(&output__umask_once, output__read_umask);
    return 0666 & ~output__umask;
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

/* Opens path's directory, for syncing it after the rename: opened before the commit, so that
 * nothing after the commit can fail for want of memory. -1 when it cannot be opened. */
static int output__open_dir_of(const char *path)
{
    P2sStrbuf dir;
    p2s_strbuf_init(&dir);
    output__dirname(path, &dir);
    int fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    p2s_strbuf_release(&dir);
    return fd;
}

/* What is at the destination decides how it is written. */
typedef enum { OUTPUT_REPLACE, OUTPUT_DIRECT, OUTPUT_REFUSE } OutputWay;

static OutputWay output__refuse_directory(const char *path, P2sStrbuf *err)
{
    p2s_strbuf_addf(err, "cannot write '%s': it is a directory", path);
    return OUTPUT_REFUSE;
}

/* A symlink to nothing yet: the file it names is created, as a shell's `>` would. */
static OutputWay output__dangling_target(const char *path, char **target, P2sStrbuf *err)
{
    char link[4096];
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n < 0) {
        p2s_strbuf_addf(err, "cannot follow the symlink '%s': %s", path, strerror(errno));
        return OUTPUT_REFUSE;
    }
    link[n] = '\0';
    P2sStrbuf full;
    p2s_strbuf_init(&full);
    const char *slash = strrchr(path, '/');
    if (link[0] != '/' && slash)
        p2s_strbuf_add(&full, path, (size_t)(slash - path) + 1);
    p2s_strbuf_adds(&full, link);
    *target = p2s_strbuf_detach(&full, NULL);
    return OUTPUT_REPLACE;
}

/* A regular file (or nothing yet) is replaced through a temp file and a rename; a device, FIFO
 * or socket is written straight into (renaming over /dev/null would destroy it); a symlink
 * is followed, so the rename happens beside its target; a directory is refused. *target is
 * the path to write (caller frees). */
static OutputWay output__way(const char *path, char **target, P2sStrbuf *err)
{
    struct stat st;
    *target = NULL;
    if (lstat(path, &st) != 0)
        return OUTPUT_REPLACE;
    if (S_ISLNK(st.st_mode)) {
        if (stat(path, &st) != 0)
            return output__dangling_target(path, target, err);
        if (!S_ISREG(st.st_mode))
            return S_ISDIR(st.st_mode) ? output__refuse_directory(path, err) : OUTPUT_DIRECT;
        char *resolved = realpath(path, NULL);
        if (!resolved) {
            p2s_strbuf_addf(err, "cannot follow the symlink '%s': %s", path, strerror(errno));
            return OUTPUT_REFUSE;
        }
        *target = p2s_strdup(resolved);
        free(resolved);  /* from realpath */
        return OUTPUT_REPLACE;
    }
    if (S_ISDIR(st.st_mode))
        return output__refuse_directory(path, err);
    return S_ISREG(st.st_mode) ? OUTPUT_REPLACE : OUTPUT_DIRECT;
}

static int output__write_direct(const char *path, const char *bytes, size_t len, P2sStrbuf *err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || p2s_io_write_all(fd, bytes, len) < 0) {
        p2s_strbuf_addf(err, "cannot write '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
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
    /* Created and registered for removal as one step (alloc.h): an interrupt or another
     * thread running out of memory in between would otherwise leave it behind. */
    int fd;
    *slot = p2s_cleanup_create(temp->buf, p2s_io_mkstemp, &fd);
    if (*slot < 0) {
        p2s_strbuf_addf(err, "cannot create a temporary file in '%s': %s", dir.buf, strerror(errno));
        goto done;
    }
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

static int output__replace(const char *path, const char *bytes, size_t len, P2sStrbuf *err)
{
    P2sStrbuf temp;
    p2s_strbuf_init(&temp);
    int slot;
    int dir = output__open_dir_of(path);
    int rc = output__write_temp(path, bytes, len, 1, &temp, &slot, err);
    if (rc == 0)
        rc = output__commit(temp.buf, path, slot, err);
    if (rc == 0 && (dir < 0 || p2s_io_fsync(dir) < 0)) {
        p2s_strbuf_addf(err, "cannot sync the directory of '%s': %s", path, strerror(errno));
        rc = -1;
    }
    if (dir >= 0)
        close(dir);
    p2s_strbuf_release(&temp);
    return rc;
}

int p2s_output_write_file(const char *path, const char *bytes, size_t len, P2sStrbuf *err)
{
    char *target;
    int rc = -1;
    switch (output__way(path, &target, err)) {
    case OUTPUT_REPLACE:
        rc = output__replace(target ? target : path, bytes, len, err);
        break;
    case OUTPUT_DIRECT:
        rc = output__write_direct(target ? target : path, bytes, len, err);
        break;
    case OUTPUT_REFUSE:
        break;
    }
    p2s_free(target);
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
    char *target;
    OutputWay way = output__way(path, &target, err);
    int rc = -1;
    if (way == OUTPUT_DIRECT) {
        rc = output__write_direct(target ? target : path, bytes, len, err);
    } else if (way == OUTPUT_REPLACE) {
        P2sStrbuf temp;
        p2s_strbuf_init(&temp);
        P2sPendingOutput p = {0};
        rc = output__write_temp(target ? target : path, bytes, len, 0, &temp, &p.slot, err);
        if (rc == 0) {
            p.temp = p2s_strbuf_detach(&temp, NULL);
            p.dest = p2s_strdup(target ? target : path);
            array_push(&self->pending, p);
        }
        p2s_strbuf_release(&temp);
    }
    p2s_free(target);
    return rc;
}

void p2s_output_batch_take(P2sOutputBatch *self, P2sOutputBatch *from)
{
    for (size_t i = 0; i < from->pending.size; i++)
        array_push(&self->pending, from->pending.contents[i]);
    from->pending.size = 0;
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
    int dir = output__open_dir_of(self->pending.contents[0].dest);
    if (dir < 0 || p2s_io_syncfs(dir) < 0) {
        p2s_strbuf_addf(err, "cannot sync the output: %s", strerror(errno));
        if (dir >= 0)
            close(dir);
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
    if (p2s_io_syncfs(dir) < 0 && rc == 0) {
        p2s_strbuf_addf(err, "cannot sync the output: %s", strerror(errno));
        rc = -1;
    }
    close(dir);
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
