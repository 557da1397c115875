/* io.c — system calls with injectable faults. */
#include "io.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int err;
    unsigned long nth;
    atomic_ulong calls;   /* workers write outputs concurrently */
} IoFault;

static IoFault io__faults[P2S_IO_OPS];

static int io__should_fail(P2sIoOp op)
{
    IoFault *f = &io__faults[op];
    if (!f->nth)
        return 0;
    if (atomic_fetch_add(&f->calls, 1) + 1 != f->nth)
        return 0;
    errno = f->err;
    return 1;
}

void p2s_io_fault_set(P2sIoOp op, int err, unsigned long nth)
{
    io__faults[op].err = err;
    io__faults[op].nth = nth;
    atomic_store(&io__faults[op].calls, 0);
}

void p2s_io_faults_clear(void)
{
    for (int op = 0; op < P2S_IO_OPS; op++)
        p2s_io_fault_set((P2sIoOp)op, 0, 0);
}

static int io__errno_named(const char *name, size_t n)
{
    static const struct { const char *name; int err; } table[] = {
        {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EXDEV", EXDEV}, {"ENOENT", ENOENT},
        {"EACCES", EACCES}, {"EPIPE", EPIPE}, {"EROFS", EROFS},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strlen(table[i].name) == n && memcmp(table[i].name, name, n) == 0)
            return table[i].err;
    return 0;
}

static int io__op_named(const char *name, size_t n)
{
    static const char *const names[P2S_IO_OPS] = {"read", "write", "fsync", "rename", "open"};
    for (int i = 0; i < P2S_IO_OPS; i++)
        if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
            return i;
    return -1;
}

int p2s_io_faults_parse(const char *spec)
{
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (!colon)
            return -1;
        int op = io__op_named(p, (size_t)(colon - p));
        const char *err_name = colon + 1;
        const char *colon2 = memchr(err_name, ':', (size_t)(end - err_name));
        const char *err_end = colon2 ? colon2 : end;
        int err = io__errno_named(err_name, (size_t)(err_end - err_name));
        unsigned long nth = colon2 ? strtoul(colon2 + 1, NULL, 10) : 1;
        if (op < 0 || !err || !nth)
            return -1;
        p2s_io_fault_set((P2sIoOp)op, err, nth);
        p = *end ? end + 1 : end;
    }
    return 0;
}

ssize_t p2s_io_read(int fd, void *buf, size_t n)
{
    if (io__should_fail(P2S_IO_READ))
        return -1;
    return read(fd, buf, n);
}

ssize_t p2s_io_write(int fd, const void *buf, size_t n)
{
    if (io__should_fail(P2S_IO_WRITE))
        return -1;
    return write(fd, buf, n);
}

int p2s_io_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = p2s_io_write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int p2s_io_fsync(int fd)
{
    if (io__should_fail(P2S_IO_FSYNC))
        return -1;
    return fsync(fd);
}

int p2s_io_syncfs(int fd)
{
    if (io__should_fail(P2S_IO_FSYNC))
        return -1;
    return syncfs(fd);
}

int p2s_io_rename(const char *from, const char *to)
{
    if (io__should_fail(P2S_IO_RENAME))
        return -1;
    return rename(from, to);
}

int p2s_io_mkstemp(char *template_path)
{
    if (io__should_fail(P2S_IO_OPEN))
        return -1;
    return mkstemp(template_path);
}
