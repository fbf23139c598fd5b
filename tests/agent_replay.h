/* tests/agent_replay.h: a chat-completions endpoint for tests: an HTTP/1.1 server thread
 * on 127.0.0.1 (ephemeral port) that answers each POST with the next recorded reply
 * (a chat.completion object with a usage field), or never answers (REPLAY_HANG: the
 * client's timeout must fire), and keeps what it was sent for the test to inspect. */
#ifndef SD_AGENT_REPLAY_H
#define SD_AGENT_REPLAY_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/core.h"

#define REPLAY_MAX 16
#define REPLAY_HANG ((const char *)1) /* an answer slot: read the request, never answer */

typedef struct {
    int listen_fd, port;
    pthread_t thread;
    volatile int stop;
    const char *answers[REPLAY_MAX]; /* message contents to return, in order */
    int nanswers;
    long usage_total;                /* total_tokens reported per answer */
    /* what came in */
    pthread_mutex_t lock;
    int nrequests;
    char *bodies[REPLAY_MAX];        /* request bodies (malloc'd) */
    char auth[REPLAY_MAX][256];      /* the Authorization header of each request */
} replay_server;

static void replay_answer(int fd, const char *content, long total)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "id");
    sdi_json_string(&j, "chatcmpl-replay");
    sdi_json_key(&j, "object");
    sdi_json_string(&j, "chat.completion");
    sdi_json_key(&j, "choices");
    sdi_json_begin_array(&j);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "index");
    sdi_json_int(&j, 0);
    sdi_json_key(&j, "message");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "role");
    sdi_json_string(&j, "assistant");
    sdi_json_key(&j, "content");
    sdi_json_string(&j, content);
    sdi_json_end_object(&j);
    sdi_json_key(&j, "finish_reason");
    sdi_json_string(&j, "stop");
    sdi_json_end_object(&j);
    sdi_json_end_array(&j);
    sdi_json_key(&j, "usage");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "prompt_tokens");
    sdi_json_int(&j, total - total / 4);
    sdi_json_key(&j, "completion_tokens");
    sdi_json_int(&j, total / 4);
    sdi_json_key(&j, "total_tokens");
    sdi_json_int(&j, total);
    sdi_json_end_object(&j);
    sdi_json_end_object(&j);
    if (sdi_json_finish(&j) == SD_OK) {
        char head[256];
        int n = snprintf(head, sizeof head,
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n",
                         strlen(j.buf));
        if (write(fd, head, (size_t)n) < 0 || write(fd, j.buf, strlen(j.buf)) < 0) {
        }
    }
    sdi_json_free(&j);
}

/* Reads one request (headers + Content-Length body); returns the body (malloc'd). */
static char *replay_read(int fd, char *auth, size_t auth_cap)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;
    long want = -1;
    size_t head_end = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0)
            break;
        if (len + 4096 + 1 > cap) {
            char *q = realloc(buf, cap * 2);
            if (q == NULL)
                break;
            buf = q;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (head_end == 0) {
            char *e = strstr(buf, "\r\n\r\n");
            if (e != NULL) {
                head_end = (size_t)(e - buf) + 4;
                char *cl = strcasestr(buf, "Content-Length:");
                want = cl && cl < e ? atol(cl + 15) : 0;
                char *au = strcasestr(buf, "Authorization:");
                if (au != NULL && au < e) {
                    char *eol = strstr(au, "\r\n");
                    snprintf(auth, auth_cap, "%.*s", (int)(eol - au), au);
                }
            }
        }
        if (head_end > 0 && (long)(len - head_end) >= want)
            break;
    }
    if (head_end == 0) {
        free(buf);
        return NULL;
    }
    memmove(buf, buf + head_end, len - head_end + 1);
    return buf;
}

static void *replay_thread(void *arg)
{
    replay_server *s = arg;
    while (!s->stop) {
        struct pollfd p = {s->listen_fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        char auth[256] = "";
        char *body = replay_read(fd, auth, sizeof auth);
        pthread_mutex_lock(&s->lock);
        int i = s->nrequests;
        if (i < REPLAY_MAX) {
            s->bodies[i] = body;
            snprintf(s->auth[i], sizeof s->auth[i], "%s", auth);
            s->nrequests++;
        } else {
            free(body);
        }
        pthread_mutex_unlock(&s->lock);
        const char *ans = i < s->nanswers ? s->answers[i] : "no more recorded answers";
        if (ans == REPLAY_HANG) {
            /* Never answer: wait for the client to give up (it closes) or the test to end. */
            while (!s->stop) {
                struct pollfd c = {fd, POLLIN, 0};
                char tmp[256];
                if (poll(&c, 1, 50) > 0 && read(fd, tmp, sizeof tmp) <= 0)
                    break;
            }
        } else {
            replay_answer(fd, ans, s->usage_total);
        }
        close(fd);
    }
    return NULL;
}

/* Starts the server; its URL is http://127.0.0.1:<port>/v1. 0 on success. */
static int replay_start(replay_server *s)
{
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->listen_fd < 0)
        return -1;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t alen = sizeof addr;
    if (bind(s->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(s->listen_fd, 8) != 0 ||
        getsockname(s->listen_fd, (struct sockaddr *)&addr, &alen) != 0) {
        close(s->listen_fd);
        return -1;
    }
    s->port = ntohs(addr.sin_port);
    pthread_mutex_init(&s->lock, NULL);
    s->stop = 0;
    return pthread_create(&s->thread, NULL, replay_thread, s) == 0 ? 0 : -1;
}

static void replay_stop(replay_server *s)
{
    s->stop = 1;
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
    for (int i = 0; i < s->nrequests && i < REPLAY_MAX; i++)
        free(s->bodies[i]);
    pthread_mutex_destroy(&s->lock);
}

static int replay_requests(replay_server *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->nrequests;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* ------------------------------------------------------------------ recorded answers */

/* A correct SpMV / SpMM kernel (one thread per row and column of the output). */
#define REPLAY_KERNEL_BODY(EXPR)                                                                     \
    "#include <cstdlib>\n"                                                                           \
    "struct St { int rows, cols, k; long long nnz; long long *rp; int *ci; float *v; };\n"           \
    "__global__ void sd_agent_rows(const long long *rp, const int *ci, const float *v, const float *x,\n" \
    "                              float *y, int rows, int k) {\n"                                   \
    "  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"                          \
    "  if (t >= (long long)rows * k) return;\n"                                                      \
    "  int r = (int)(t / k), c = (int)(t % k);\n"                                                    \
    "  float s = 0.f;\n"                                                                             \
    "  for (long long j = rp[r]; j < rp[r + 1]; j++) s += v[j] * x[(long long)ci[j] * k + c];\n"  \
    "  y[t] = " EXPR ";\n"                                                                           \
    "}\n"                                                                                            \
    "extern \"C\" int sd_agent_preprocess(const sd_agent_problem *p, void **state) {\n"            \
    "  St *s = (St *)calloc(1, sizeof(St)); if (!s) return 2;\n"                                   \
    "  s->rows = p->rows; s->cols = p->cols; s->k = p->k; s->nnz = p->nnz;\n"                      \
    "  cudaError_t e = cudaMalloc(&s->rp, (p->rows + 1) * sizeof(long long));\n"                   \
    "  if (!e) e = cudaMalloc(&s->ci, (p->nnz ? p->nnz : 1) * sizeof(int));\n"                     \
    "  if (!e) e = cudaMalloc(&s->v, (p->nnz ? p->nnz : 1) * sizeof(float));\n"                    \
    "  if (!e) e = cudaMemcpy(s->rp, p->rowptr, (p->rows + 1) * sizeof(long long), cudaMemcpyHostToDevice);\n" \
    "  if (!e) e = cudaMemcpy(s->ci, p->colind, p->nnz * sizeof(int), cudaMemcpyHostToDevice);\n"  \
    "  if (!e) e = cudaMemcpy(s->v, p->vals, p->nnz * sizeof(float), cudaMemcpyHostToDevice);\n"   \
    "  *state = s; return (int)e;\n"                                                                 \
    "}\n"                                                                                            \
    "extern \"C\" int sd_agent_compute(void *state, const float *x, float *y, cudaStream_t st) {\n" \
    "  St *s = (St *)state; long long n = (long long)s->rows * s->k;\n"                            \
    "  if (n == 0) return 0;\n"                                                                      \
    "  sd_agent_rows<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(s->rp, s->ci, s->v, x, y, s->rows, s->k);\n" \
    "  return (int)cudaGetLastError();\n"                                                            \
    "}\n"                                                                                            \
    "extern \"C\" void sd_agent_cleanup(void *state) {\n"                                          \
    "  St *s = (St *)state; if (!s) return;\n"                                                     \
    "  cudaFree(s->rp); cudaFree(s->ci); cudaFree(s->v); free(s);\n"                               \
    "}\n"

#define REPLAY_CORRECT                                                                            \
    "Here is a row-per-thread kernel.\n```cuda\n" REPLAY_KERNEL_BODY("s") "```\nIt should validate."
/* Doubles every entry: compiles, runs, fails validation. */
#define REPLAY_WRONG "```cuda\n" REPLAY_KERNEL_BODY("2.f * s + 1.f") "```\n"
/* A syntax error nvcc rejects. */
#define REPLAY_BROKEN                                                                             \
    "```cuda\nextern \"C\" int sd_agent_compute(void *state, const float *x, float *y, cudaStream_t st) {\n" \
    "  return this_does_not_compile +;\n}\n```\n"
#define REPLAY_NO_CODE "I would use a merge-path schedule here, but I will not write it out."

#endif /* SD_AGENT_REPLAY_H */
