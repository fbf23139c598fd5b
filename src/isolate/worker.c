/* src/isolate/worker.c: the worker process: start (fork + exec of `sparseditto worker`),
 * one JSON line per request and reply over two pipes, timeouts by poll() + SIGKILL of
 * the worker's process group, reaping with waitpid (no zombies), restart after a fault;
 * the child's request loop; a subprocess runner with a timeout (nvcc, ncu). */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

struct sdi_worker {
    char exe[PATH_MAX];
    char log_path[PATH_MAX];
    pid_t pid;  /* -1 when no worker runs */
    int to_fd;  /* requests → worker */
    int from_fd; /* replies ← worker */
    int starts;
    long next_id;
    char *rbuf; /* bytes read past the last reply line */
    size_t rlen, rcap;
};

/* ------------------------------------------------------------------ helpers */

void sdi_file_tail(const char *path, size_t max, char *out, size_t cap)
{
    if (cap == 0)
        return;
    out[0] = '\0';
    if (path == NULL || path[0] == '\0')
        return;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return;
    if (max >= cap)
        max = cap - 1;
    long size = 0;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    long from = size > (long)max ? size - (long)max : 0;
    if (fseek(f, from, SEEK_SET) == 0) {
        size_t n = fread(out, 1, max, f);
        out[n] = '\0';
        /* One line for messages: newlines become " | ". Keep it readable, not exact. */
        for (size_t i = 0; i < n; i++)
            if (out[i] == '\n' || out[i] == '\r' || out[i] == '\t')
                out[i] = ' ';
    }
    fclose(f);
}

void sdi_worker_exe(char *out, size_t cap)
{
    const char *env = sdi_config_get()->worker;
    if (env[0]) {
        snprintf(out, cap, "%s", env);
        return;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        const char *base = slash ? slash + 1 : self;
        if (strcmp(base, "sparseditto") == 0) {
            snprintf(out, cap, "%s", self);
            return;
        }
        if (slash != NULL) {
            *slash = '\0';
            char sib[PATH_MAX + 16];
            snprintf(sib, sizeof sib, "%s/sparseditto", self);
            if (access(sib, X_OK) == 0) {
                snprintf(out, cap, "%s", sib);
                return;
            }
        }
    }
    snprintf(out, cap, "sparseditto");
}

/* Writes all of buf; SIGPIPE (a dead reader) is blocked in this thread and a pending
 * one consumed, so a dead worker is an EPIPE status rather than the death of the tuner
 * (the process-wide disposition is not ours to change). */
static int write_all(int fd, const char *buf, size_t len)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    int rc = 0;
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        buf += w;
        len -= (size_t)w;
    }
    if (rc != 0 && errno == EPIPE) {
        struct timespec zero = {0, 0};
        int saved = errno;
        while (sigtimedwait(&pipe_set, NULL, &zero) > 0) {
        }
        errno = saved;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Kills a process group (the worker and whatever it started: nvcc, ncu) and reaps
 * the leader. */
static void kill_and_reap(pid_t pid, int *status)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (status)
        *status = st;
}

static void describe_exit(int st, char *out, size_t cap, int *sig, int *code)
{
    *sig = 0;
    *code = 0;
    if (WIFSIGNALED(st)) {
        *sig = WTERMSIG(st);
        snprintf(out, cap, "killed by signal %d (%s)", *sig, strsignal(*sig));
    } else if (WIFEXITED(st)) {
        *code = WEXITSTATUS(st);
        snprintf(out, cap, "exited with code %d", *code);
    } else {
        snprintf(out, cap, "ended (status 0x%x)", st);
    }
}

/* ------------------------------------------------------------------ parent side */

sd_status sdi_worker_create(const char *exe, const char *log_path, sdi_worker **out)
{
    *out = NULL;
    sdi_worker *w = sdi_calloc(1, sizeof *w);
    if (w == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a worker");
    if (exe != NULL && exe[0])
        snprintf(w->exe, sizeof w->exe, "%s", exe);
    else
        sdi_worker_exe(w->exe, sizeof w->exe);
    snprintf(w->log_path, sizeof w->log_path, "%s", log_path ? log_path : "/dev/null");
    w->pid = -1;
    w->to_fd = w->from_fd = -1;
    *out = w;
    return SD_OK;
}

static void close_fds(sdi_worker *w)
{
    if (w->to_fd >= 0)
        close(w->to_fd);
    if (w->from_fd >= 0)
        close(w->from_fd);
    w->to_fd = w->from_fd = -1;
    w->rlen = 0;
}

/* Retires the current worker: closes the pipes, kills the group, reaps. */
static void retire(sdi_worker *w, int *status)
{
    close_fds(w);
    if (w->pid > 0)
        kill_and_reap(w->pid, status);
    w->pid = -1;
}

static sd_status start(sdi_worker *w, char *cause, size_t cap)
{
    int req[2] = {-1, -1}, rep[2] = {-1, -1};
    if (pipe2(req, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (req[i] >= 0)
                close(req[i]);
            if (rep[i] >= 0)
                close(rep[i]);
        }
        snprintf(cause, cap, "cannot create pipes (%s)", strerror(e));
        return SD_ERR_IO;
    }
    /* The worker runs untrusted code: it gets the environment without the model's API
     * keys (built before fork: the child may only make async-signal-safe calls). */
    extern char **environ;
    size_t nenv = 0;
    while (environ[nenv] != NULL)
        nenv++;
    char **envp = sdi_malloc_array(nenv + 1, sizeof *envp);
    if (envp == NULL) {
        close(req[0]), close(req[1]), close(rep[0]), close(rep[1]);
        snprintf(cause, cap, "out of host memory");
        return SD_ERR_OUT_OF_MEMORY;
    }
    size_t ne = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "SPARSEDITTO_AGENT_KEY=", 22) != 0 && strncmp(environ[i], "OPENAI_API_KEY=", 15) != 0)
            envp[ne++] = environ[i];
    envp[ne] = NULL;
    int logfd = open(w->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    /* A pipe that closes when the child execs: an exec failure is known here, before any
     * request is written (otherwise it races with the write and reads as a crash). */
    int ex[2] = {-1, -1};
    pid_t pid = pipe2(ex, O_CLOEXEC) == 0 ? fork() : -1;
    if (pid < 0) {
        int e = errno;
        close(req[0]), close(req[1]), close(rep[0]), close(rep[1]);
        if (ex[0] >= 0)
            close(ex[0]), close(ex[1]);
        if (logfd >= 0)
            close(logfd);
        sdi_free(envp);
        snprintf(cause, cap, "fork failed (%s)", strerror(e));
        return SD_ERR_IO;
    }
    if (pid == 0) {
        /* Child: async-signal-safe calls only until exec. Its own process group, so a
         * kill reaches the compilers and profilers it starts. The pipes go to fds 3 and
         * 4 (moved above 10 first so dup2 cannot clobber one with the other); stdout and
         * stderr go to the log, away from the reply channel. */
        setpgid(0, 0);
        int a = fcntl(req[0], F_DUPFD, 10), b = fcntl(rep[1], F_DUPFD, 10);
        if (a < 0 || b < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0)
            _exit(126);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        if (logfd >= 0) {
            dup2(logfd, 1);
            dup2(logfd, 2);
        }
        char *argv[] = {w->exe, (char *)"worker", (char *)"--fd-in", (char *)"3",
                        (char *)"--fd-out", (char *)"4", NULL};
        execvpe(w->exe, argv, envp);
        int e = errno;
        if (write(ex[1], &e, sizeof e) < 0) {
        }
        _exit(127);
    }
    sdi_free(envp);
    setpgid(pid, pid); /* also from the parent: no race with the first kill */
    close(req[0]);
    close(rep[1]);
    close(ex[1]);
    if (logfd >= 0)
        close(logfd);
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(ex[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    close(ex[0]);
    if (n == (ssize_t)sizeof exec_errno) {
        close(req[1]);
        close(rep[0]);
        kill_and_reap(pid, NULL);
        /* Paths are cut to fit the message (PATH_MAX would not). */
        snprintf(cause, cap, "cannot execute the worker (%.60s; set SPARSEDITTO_WORKER to the sparseditto command): '%.100s'",
                 strerror(exec_errno), w->exe);
        return SD_ERR_IO;
    }
    w->pid = pid;
    w->to_fd = req[1];
    w->from_fd = rep[0];
    w->rlen = 0;
    w->starts++;
    return SD_OK;
}

/* Reads until a full line is buffered or the deadline passes. 1 = line (its length
 * without the newline in *line_len), 0 = EOF, -1 = timeout, -2 = host error. */
static int read_line(sdi_worker *w, double deadline, size_t *line_len)
{
    for (;;) {
        char *nl = w->rlen ? memchr(w->rbuf, '\n', w->rlen) : NULL;
        if (nl != NULL) {
            *line_len = (size_t)(nl - w->rbuf);
            return 1;
        }
        double left = deadline - sdi_now();
        if (left <= 0)
            return -1;
        struct pollfd p = {w->from_fd, POLLIN, 0};
        int ms = left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1;
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -2;
        if (r == 0)
            continue; /* re-checks the deadline */
        if (w->rlen + 65536 + 1 > w->rcap) {
            size_t cap = w->rcap ? w->rcap * 2 : 131072;
            char *q = sdi_realloc_array(w->rbuf, cap, 1);
            if (q == NULL)
                return -2;
            w->rbuf = q;
            w->rcap = cap;
        }
        ssize_t n = read(w->from_fd, w->rbuf + w->rlen, 65536);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return 0;
        w->rlen += (size_t)n;
    }
}

void sdi_worker_reply_free(sdi_worker_reply *r)
{
    if (r == NULL)
        return;
    sdi_free(r->reply_json);
    sdi_jvalue_free(&r->reply);
    memset(r, 0, sizeof *r);
}

/* The candidate's name from the request (for causes). */
static void request_name(const char *json, char *out, size_t cap)
{
    snprintf(out, cap, "?");
    sdi_jvalue v;
    if (sdi_json_parse(json, -1, &v) == SD_OK) {
        snprintf(out, cap, "%s", sdi_jget_string(&v, "name", "?"));
        sdi_jvalue_free(&v);
    } else {
        sdi_error_clear();
    }
}

sd_status sdi_worker_call(sdi_worker *w, const char *request_json, double timeout_s,
                          sdi_worker_reply *out)
{
    memset(out, 0, sizeof *out);
    if (w == NULL || request_json == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_worker_call: worker or request is NULL");
    char name[128], why[256], tail[256];
    request_name(request_json, name, sizeof name);
    double t0 = sdi_now();
    if (w->pid < 0) {
        sd_status s = start(w, why, sizeof why);
        if (s != SD_OK) {
            out->outcome = SDI_WORKER_NOT_STARTED;
            snprintf(out->cause, sizeof out->cause, "candidate '%s': worker not started: %s", name, why);
            return SD_OK;
        }
    }
    int st = 0;
    if (write_all(w->to_fd, request_json, strlen(request_json)) != 0 || write_all(w->to_fd, "\n", 1) != 0) {
        /* The worker is gone before it read the request (exec failed, or it died). */
        retire(w, &st);
        describe_exit(st, why, sizeof why, &out->term_signal, &out->exit_code);
        sdi_file_tail(w->log_path, 200, tail, sizeof tail);
        out->outcome = out->exit_code == 127 ? SDI_WORKER_NOT_STARTED : SDI_WORKER_CRASHED;
        snprintf(out->cause, sizeof out->cause, "candidate '%s': worker %.200s%s%.200s%s", name, why,
                 out->exit_code == 127 ? " (cannot execute the worker '" : "",
                 out->exit_code == 127 ? w->exe : "",
                 out->exit_code == 127 ? "'; set SPARSEDITTO_WORKER to the sparseditto command)" : tail[0] ? "; log: " : "");
        if (out->exit_code != 127 && tail[0])
            snprintf(out->cause + strlen(out->cause), sizeof out->cause - strlen(out->cause), "%s", tail);
        out->wall_s = sdi_now() - t0;
        return SD_OK;
    }
    size_t len = 0;
    int r = read_line(w, t0 + timeout_s, &len);
    out->wall_s = sdi_now() - t0;
    if (r == -2) {
        retire(w, NULL);
        return SDI_ERR(SD_ERR_IO, "worker: cannot read the reply to candidate '%s'", name);
    }
    if (r == -1) {
        retire(w, NULL);
        out->outcome = SDI_WORKER_TIMEOUT;
        snprintf(out->cause, sizeof out->cause,
                 "candidate '%s': no reply within %.1f s (hang): the worker was killed", name, timeout_s);
        return SD_OK;
    }
    if (r == 0) {
        retire(w, &st);
        describe_exit(st, why, sizeof why, &out->term_signal, &out->exit_code);
        sdi_file_tail(w->log_path, 240, tail, sizeof tail);
        out->outcome = out->exit_code == 127 ? SDI_WORKER_NOT_STARTED : SDI_WORKER_CRASHED;
        snprintf(out->cause, sizeof out->cause, "candidate '%s': the worker %.200s%s%s", name, why,
                 tail[0] ? "; log: " : "", tail);
        if (out->exit_code == 127)
            snprintf(out->cause, sizeof out->cause, "candidate '%s': cannot execute the worker '%.300s' "
                     "(set SPARSEDITTO_WORKER to the sparseditto command)", name, w->exe);
        return SD_OK;
    }
    out->reply_json = sdi_malloc(len + 1);
    if (out->reply_json == NULL) {
        retire(w, NULL);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a worker reply");
    }
    memcpy(out->reply_json, w->rbuf, len);
    out->reply_json[len] = '\0';
    memmove(w->rbuf, w->rbuf + len + 1, w->rlen - len - 1);
    w->rlen -= len + 1;
    if (sdi_json_parse(out->reply_json, -1, &out->reply) != SD_OK) {
        snprintf(why, sizeof why, "%s", sd_last_error());
        sdi_error_clear();
        retire(w, NULL);
        out->outcome = SDI_WORKER_PROTOCOL;
        snprintf(out->cause, sizeof out->cause, "candidate '%s': unreadable reply (%s)", name, why);
        return SD_OK;
    }
    out->outcome = SDI_WORKER_REPLIED;
    const sdi_jvalue *fatal = sdi_jget(&out->reply, "fatal");
    if (fatal != NULL && fatal->type == SDI_JBOOL && fatal->boolean)
        retire(w, NULL); /* it exits by itself; reap it now, the next call starts afresh */
    return SD_OK;
}

int sdi_worker_starts(const sdi_worker *w) { return w ? w->starts : 0; }

pid_t sdi_worker_pid(const sdi_worker *w) { return w ? w->pid : -1; }

void sdi_worker_destroy(sdi_worker *w)
{
    if (w == NULL)
        return;
    if (w->pid > 0) {
        /* EOF asks it to leave; a worker stuck in a kernel is killed after a grace period. */
        close_fds(w);
        int st;
        double deadline = sdi_now() + 2.0;
        pid_t r;
        while ((r = waitpid(w->pid, &st, WNOHANG)) == 0 && sdi_now() < deadline) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (r == 0)
            kill_and_reap(w->pid, NULL);
        w->pid = -1;
    }
    close_fds(w);
    sdi_free(w->rbuf);
    sdi_free(w);
}

/* ------------------------------------------------------------------ subprocesses */

sd_status sdi_subprocess_run(char *const argv[], const char *log_path, double timeout_s, int *exit_code)
{
    *exit_code = -1;
    int logfd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (logfd < 0)
        return SDI_ERR(SD_ERR_IO, "cannot open '%s' (%s)", log_path, strerror(errno));
    /* A pipe that closes when the child execs tells an exec failure from a run. */
    int ex[2];
    if (pipe2(ex, O_CLOEXEC) != 0) {
        close(logfd);
        return SDI_ERR(SD_ERR_IO, "cannot create a pipe (%s)", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(logfd), close(ex[0]), close(ex[1]);
        return SDI_ERR(SD_ERR_IO, "fork failed (%s)", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        execvp(argv[0], argv);
        int e = errno;
        if (write(ex[1], &e, sizeof e) < 0) {
        }
        _exit(127);
    }
    setpgid(pid, pid);
    close(logfd);
    close(ex[1]);
    int exec_errno = 0;
    ssize_t n;
    while ((n = read(ex[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    close(ex[0]);
    if (n == (ssize_t)sizeof exec_errno) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        return SDI_ERR(SD_ERR_IO, "cannot run '%s' (%s)", argv[0], strerror(exec_errno));
    }
    double deadline = sdi_now() + timeout_s;
    int st = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            kill_and_reap(pid, NULL);
            return SDI_ERR(SD_ERR_IO, "waitpid failed for '%s' (%s)", argv[0], strerror(errno));
        }
        if (sdi_now() > deadline) {
            kill_and_reap(pid, NULL);
            *exit_code = -1;
            return SD_OK;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL); /* strays left in its group (none normally) */
    *exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    return SD_OK;
}

/* ------------------------------------------------------------------ child side */

static sd_status handle_one(const char *line, long len, sdi_worker_handler handler, void *arg,
                            sdi_json *j, bool *fatal)
{
    sdi_jvalue req;
    *fatal = false;
    sdi_json_init(j, 0);
    sdi_json_begin_object(j);
    sd_status s = sdi_json_parse(line, len, &req);
    if (s != SD_OK) {
        sdi_json_key(j, "status");
        sdi_json_string(j, "error");
        sdi_json_key(j, "detail");
        sdi_json_string(j, sd_last_error());
    } else {
        sdi_json_key(j, "id");
        sdi_json_number(j, sdi_jget_number(&req, "id", 0));
        sdi_json_key(j, "name");
        sdi_json_string(j, sdi_jget_string(&req, "name", "?"));
        sdi_error_clear();
        s = handler(arg, &req, j, fatal);
        if (s != SD_OK && s != SD_ERR_VALIDATION && s != SD_ERR_COMPILE) {
            /* The handler wrote its own status for validation and compile outcomes. */
            sdi_json_key(j, "error_status");
            sdi_json_string(j, sd_status_string(s));
            sdi_json_key(j, "error");
            sdi_json_string(j, sd_last_error());
        }
        sdi_jvalue_free(&req);
    }
    if (*fatal) {
        sdi_json_key(j, "fatal");
        sdi_json_bool(j, true);
    }
    sdi_json_end_object(j);
    return sdi_json_finish(j);
}

int sdi_worker_serve(int fd_in, int fd_out, sdi_worker_handler handler, void *arg)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        char *nl = len ? memchr(buf, '\n', len) : NULL;
        if (nl == NULL) {
            if (len + 65536 + 1 > cap) {
                size_t ncap = cap ? cap * 2 : 131072;
                char *q = sdi_realloc_array(buf, ncap, 1);
                if (q == NULL) {
                    rc = 4;
                    break;
                }
                buf = q;
                cap = ncap;
            }
            ssize_t n = read(fd_in, buf + len, 65536);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break; /* EOF: the tuner is done with us */
            len += (size_t)n;
            continue;
        }
        size_t line = (size_t)(nl - buf);
        sdi_json j;
        bool fatal = false;
        sd_status s = handle_one(buf, (long)line, handler, arg, &j, &fatal);
        memmove(buf, nl + 1, len - line - 1);
        len -= line + 1;
        if (s != SD_OK || write_all(fd_out, j.buf, strlen(j.buf)) != 0 || write_all(fd_out, "\n", 1) != 0) {
            sdi_json_free(&j);
            rc = 4;
            break;
        }
        sdi_json_free(&j);
        if (fatal) {
            rc = 3; /* the CUDA context is poisoned: leave, the tuner starts a new worker */
            break;
        }
    }
    sdi_free(buf);
    return rc;
}

int sdi_worker_serve_once(const char *request_path, const char *reply_path, sdi_worker_handler handler,
                          void *arg)
{
    FILE *f = fopen(request_path, "rb");
    if (f == NULL) {
        fprintf(stderr, "sparseditto worker: cannot read '%s' (%s)\n", request_path, strerror(errno));
        return 1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *q = sdi_realloc_array(text, cap, 1);
            if (q == NULL) {
                fclose(f);
                sdi_free(text);
                return 4;
            }
            text = q;
        }
        size_t n = fread(text + len, 1, 4096, f);
        len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    sdi_json j;
    bool fatal = false;
    sd_status s = handle_one(text, (long)len, handler, arg, &j, &fatal);
    sdi_free(text);
    int rc = 0;
    if (s == SD_OK) {
        FILE *o = fopen(reply_path, "wb");
        if (o == NULL || fprintf(o, "%s\n", j.buf) < 0)
            rc = 1;
        if (o != NULL && fclose(o) != 0)
            rc = 1;
    } else {
        rc = 4;
    }
    sdi_json_free(&j);
    return rc != 0 ? rc : fatal ? 3 : 0;
}
