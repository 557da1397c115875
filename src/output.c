/* output.c — atomic file output (after git's lockfile: temp + fsync + rename). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "io.h"

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

static void output__fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        /* Durability of the rename; the data itself is already safe. */
        (void)p2s_io_fsync(fd);
        close(fd);
    }
}

int p2s_output_write_file(const char *path, const char *bytes, size_t len, P2sStrbuf *err)
{
    P2sStrbuf dir, tmp;
    p2s_strbuf_init(&dir);
    p2s_strbuf_init(&tmp);
    int fd = -1, slot = -1, rc = -1, temp_exists = 0;
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : output__new_file_mode();

    output__dirname(path, &dir);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    p2s_strbuf_addf(&tmp, "%s/.%s.p2s-XXXXXX", dir.buf, base);
    fd = p2s_io_mkstemp(tmp.buf);
    if (fd < 0) {
        p2s_strbuf_addf(err, "cannot create a temporary file in '%s': %s", dir.buf, strerror(errno));
        goto fail;
    }
    temp_exists = 1;
    slot = p2s_cleanup_register(tmp.buf);
    if (p2s_io_write_all(fd, bytes, len) < 0) {
        p2s_strbuf_addf(err, "cannot write '%s': %s", path, strerror(errno));
        goto fail;
    }
    if (fchmod(fd, mode) < 0 || p2s_io_fsync(fd) < 0) {
        p2s_strbuf_addf(err, "cannot write '%s': %s", path, strerror(errno));
        goto fail;
    }
    if (close(fd) < 0) {
        fd = -1;
        p2s_strbuf_addf(err, "cannot write '%s': %s", path, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (p2s_io_rename(tmp.buf, path) < 0) {
        p2s_strbuf_addf(err, "cannot replace '%s': %s", path, strerror(errno));
        goto fail;
    }
    temp_exists = 0;
    output__fsync_dir(dir.buf);
    rc = 0;
fail:
    if (fd >= 0)
        close(fd);
    if (temp_exists)
        unlink(tmp.buf);
    p2s_cleanup_unregister(slot);
    p2s_strbuf_release(&dir);
    p2s_strbuf_release(&tmp);
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
