/* tests/sdt_pipe.h: inputs that are not regular files, for the readers' tests: a pipe
 * filled by a child process, readable as "/dev/fd/N" or as standard input ("-"), and a
 * FIFO filled the same way. */
#ifndef SDT_PIPE_H
#define SDT_PIPE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    int fd;    /* the read end of a pipe; -1 for a FIFO (or when it could not be made) */
    pid_t pid; /* the writer */
    char path[600];
} sdt_pipe;

/* The writer: fills fd with [data, data + len) and exits. The default SIGPIPE ends it
 * when the reader stops early, as it would end a real producer. */
static inline void sdt_write_and_exit(int fd, const void *data, size_t len)
{
    signal(SIGPIPE, SIG_DFL);
    const char *b = data;
    while (len > 0) {
        ssize_t k = write(fd, b, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            _exit(1);
        b += k;
        len -= (size_t)k;
    }
    _exit(0);
}

/* A pipe whose write end a child fills with [data, data + len) and then closes. */
static inline sdt_pipe sdt_pipe_from(const void *data, size_t len)
{
    sdt_pipe p = {-1, -1, ""};
    int fds[2];
    if (pipe(fds) != 0)
        return p;
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return p;
    }
    if (pid == 0) {
        close(fds[0]);
        sdt_write_and_exit(fds[1], data, len);
    }
    close(fds[1]);
    p.fd = fds[0];
    p.pid = pid;
    snprintf(p.path, sizeof p.path, "/dev/fd/%d", fds[0]);
    return p;
}

/* A FIFO made at fifo that a child opens and fills; the reader opens p.path itself. */
static inline sdt_pipe sdt_fifo_from(const char *fifo, const void *data, size_t len)
{
    sdt_pipe p = {-1, -1, ""};
    if (mkfifo(fifo, 0600) != 0)
        return p;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(fifo, O_WRONLY);
        if (fd < 0)
            _exit(1);
        sdt_write_and_exit(fd, data, len);
    }
    p.pid = pid;
    snprintf(p.path, sizeof p.path, "%s", fifo);
    return p;
}

/* Closes the read end, reaps the writer and removes a FIFO. */
static inline void sdt_pipe_done(sdt_pipe *p)
{
    if (p->fd >= 0)
        close(p->fd);
    else if (p->path[0] != '\0') {
        /* A writer still waiting for a reader is let through (and ends on SIGPIPE). */
        int fd = open(p->path, O_RDONLY | O_NONBLOCK);
        if (fd >= 0)
            close(fd);
        unlink(p->path);
    }
    if (p->pid > 0)
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR) {
        }
    p->fd = -1;
    p->pid = -1;
}

/* Runs the reader on standard input taken from p: fd 0 is swapped for the pipe during
 * the call and restored after. */
#define SDT_WITH_STDIN(p, call)                                                            \
    do {                                                                                   \
        int sdt_saved_ = dup(0);                                                           \
        dup2((p).fd, 0);                                                                   \
        call;                                                                              \
        dup2(sdt_saved_, 0);                                                               \
        close(sdt_saved_);                                                                 \
    } while (0)

#endif /* SDT_PIPE_H */
