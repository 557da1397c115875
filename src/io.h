/* io.h — the I/O seam. Every read, write, fsync and rename of user files goes through here so
 * tests can make them fail (tests run as root: permissions alone cannot fail a write).
 * P2S_FAULT="op:ERRNO[:N],..." (op: read, write, fsync, rename, open; ERRNO: ENOSPC, EIO, EXDEV,
 * ENOENT, EACCES; N: fail the Nth call of that op, default 1) sets faults from the environment. */
#ifndef P2S_IO_H
#define P2S_IO_H

#include <sys/types.h>

typedef enum { P2S_IO_READ, P2S_IO_WRITE, P2S_IO_FSYNC, P2S_IO_RENAME, P2S_IO_OPEN, P2S_IO_OPS } P2sIoOp;

/* Returns 0, or -1 if the spec is malformed. */
int  p2s_io_faults_parse(const char *spec);
/* Makes the nth call (1-based) of op fail with err; n == 0 clears the fault. */
void p2s_io_fault_set(P2sIoOp op, int err, unsigned long nth);
void p2s_io_faults_clear(void);

ssize_t p2s_io_read(int fd, void *buf, size_t n);
ssize_t p2s_io_write(int fd, const void *buf, size_t n);
int     p2s_io_write_all(int fd, const void *buf, size_t n);  /* 0, or -1 with errno */
int     p2s_io_fsync(int fd);
int     p2s_io_syncfs(int fd);                         /* counts as an fsync for faults */
int     p2s_io_rename(const char *from, const char *to);
int     p2s_io_mkstemp(char *template_path);

#endif
