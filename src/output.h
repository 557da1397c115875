/* output.h — writing results without ever leaving a partial file. A file is written to a temp
 * file in its own directory, fsynced, renamed over the destination, and the directory fsynced;
 * on any failure the destination is untouched and the temp file removed. */
#ifndef P2S_OUTPUT_H
#define P2S_OUTPUT_H

#include <stddef.h>

#include "strbuf.h"

/* Returns 0, or -1 with a one-line reason (naming the path) appended to err. An existing
 * destination keeps its permission bits; a new one gets 0666 less the umask. */
int p2s_output_write_file(const char *path, const char *bytes, size_t len, P2sStrbuf *err);
/* Writes everything to fd (stdout); -1 with a reason in err on a write error. */
int p2s_output_write_fd(int fd, const char *name, const char *bytes, size_t len, P2sStrbuf *err);

#endif
