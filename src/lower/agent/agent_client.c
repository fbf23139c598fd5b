/* src/lower/agent/agent_client.c: configuration from the environment, the conversation
 * and its budgets, and the chat-completions call over HTTP(S) with libcurl. Without
 * libcurl (SD_HAVE_CURL undefined) everything but the call builds, and the call says
 * the library was built without it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SD_HAVE_CURL
#include <curl/curl.h>
#endif

#include "agent.h"

#define MAX_RESPONSE_BYTES (16u << 20) /* a reply larger than this is not a kernel */

bool sdi_agent_built(void)
{
#ifdef SD_HAVE_CURL
    return true;
#else
    return false;
#endif
}

static bool local_endpoint(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    return strncmp(p, "127.0.0.1", 9) == 0 || strncmp(p, "localhost", 9) == 0 || strncmp(p, "[::1]", 5) == 0;
}

sd_status sdi_agent_config_from_env(sdi_agent_config *c)
{
    memset(c, 0, sizeof *c);
    if (!sdi_agent_built())
        return SDI_ERR(SD_ERR_UNSUPPORTED, "the agent lowering backend is not available: this library "
                                           "was built without libcurl (install libcurl4-openssl-dev and rebuild)");
    const sdi_config *cfg = sdi_config_get();
    const char *url = cfg->agent_url, *model = cfg->agent_model, *key = cfg->agent_key;
    if (url[0] == '\0')
        return SDI_ERR(SD_ERR_UNSUPPORTED, "agent lowering needs an endpoint: set SPARSEDITTO_AGENT_URL "
                                           "(an OpenAI-compatible base URL such as https://api.openai.com/v1)");
    if (model[0] == '\0')
        return SDI_ERR(SD_ERR_UNSUPPORTED, "agent lowering needs a model: set SPARSEDITTO_AGENT_MODEL");
    if (key[0] == '\0' && !local_endpoint(url))
        return SDI_ERR(SD_ERR_UNSUPPORTED, "agent lowering needs an API key for %s: set SPARSEDITTO_AGENT_KEY", url);
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    const char *suffix = "/chat/completions";
    bool full = n >= strlen(suffix) && strncmp(url + n - strlen(suffix), suffix, strlen(suffix)) == 0;
    int w = snprintf(c->url, sizeof c->url, "%.*s%s", (int)n, url, full ? "" : suffix);
    if (w < 0 || (size_t)w >= sizeof c->url)
        return SDI_ERR(SD_ERR_INVALID_ARG, "SPARSEDITTO_AGENT_URL is too long");
    if (snprintf(c->model, sizeof c->model, "%s", model) >= (int)sizeof c->model)
        return SDI_ERR(SD_ERR_INVALID_ARG, "SPARSEDITTO_AGENT_MODEL is too long");
    if (snprintf(c->key, sizeof c->key, "%s", key) >= (int)sizeof c->key)
        return SDI_ERR(SD_ERR_INVALID_ARG, "the API key is too long (at most %zu bytes)", sizeof c->key - 1);
    c->max_calls = cfg->agent_budget;
    c->max_tokens = cfg->agent_tokens;
    c->max_wall_s = cfg->agent_wall_s;
    c->request_timeout_s = cfg->agent_timeout_s;
    c->profile = cfg->agent_profile;
    return SD_OK;
}

/* ------------------------------------------------------------------ the conversation */

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = sdi_malloc(n + 1);
    if (d != NULL)
        memcpy(d, s, n + 1);
    return d;
}

sd_status sdi_agent_conversation_init(sdi_agent_conversation *s, const sdi_agent_config *cfg)
{
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->t_start = sdi_now();
    sdi_json_init(&s->events, 0);
    sdi_json_begin_array(&s->events);
    return SD_OK;
}

void sdi_agent_conversation_free(sdi_agent_conversation *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < s->nmsgs; i++) {
        sdi_free(s->msgs[i].role);
        sdi_free(s->msgs[i].content);
    }
    sdi_free(s->msgs);
    sdi_json_free(&s->events);
    /* The key must not linger in freed memory longer than needed. */
    memset(s->cfg.key, 0, sizeof s->cfg.key);
    memset(s, 0, sizeof *s);
}

sd_status sdi_agent_add(sdi_agent_conversation *s, const char *role, const char *content)
{
    if (s->nmsgs == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        sdi_agent_msg *m = sdi_realloc_array(s->msgs, (size_t)cap, sizeof *m);
        if (m == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the conversation");
        s->msgs = m;
        s->cap = cap;
    }
    char *r = dup_str(role), *c = dup_str(content);
    if (r == NULL || c == NULL) {
        sdi_free(r);
        sdi_free(c);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the conversation");
    }
    s->msgs[s->nmsgs].role = r;
    s->msgs[s->nmsgs].content = c;
    s->nmsgs++;
    return SD_OK;
}

bool sdi_agent_budget_spent(const sdi_agent_conversation *s, char *why, size_t cap)
{
    if (s->calls >= s->cfg.max_calls) {
        snprintf(why, cap, "call budget spent (%d of %d)", s->calls, s->cfg.max_calls);
        return true;
    }
    if (s->total_tokens >= s->cfg.max_tokens) {
        snprintf(why, cap, "token budget spent (%ld of %ld)", s->total_tokens, s->cfg.max_tokens);
        return true;
    }
    double wall = sdi_now() - s->t_start;
    if (wall >= s->cfg.max_wall_s) {
        snprintf(why, cap, "wall-time budget spent (%.0f s of %.0f s)", wall, s->cfg.max_wall_s);
        return true;
    }
    return false;
}

void sdi_agent_log_event(sdi_agent_conversation *s, const char *json_object)
{
    sdi_json_raw(&s->events, json_object);
}

/* New conversation messages into the transcript (each message appears once). */
static void log_messages(sdi_agent_conversation *s)
{
    for (; s->logged_msgs < s->nmsgs; s->logged_msgs++) {
        const sdi_agent_msg *m = &s->msgs[s->logged_msgs];
        sdi_json_begin_object(&s->events);
        sdi_json_key(&s->events, "type");
        sdi_json_string(&s->events, "message");
        sdi_json_key(&s->events, "role");
        sdi_json_string(&s->events, m->role);
        sdi_json_key(&s->events, "content");
        sdi_json_string(&s->events, m->content);
        sdi_json_end_object(&s->events);
    }
}

sd_status sdi_agent_transcript(sdi_agent_conversation *s, const char *outcome, char **out)
{
    *out = NULL;
    log_messages(s);
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "backend");
    sdi_json_string(&j, "agent");
    sdi_json_key(&j, "model");
    sdi_json_string(&j, s->cfg.model);
    sdi_json_key(&j, "endpoint");
    sdi_json_string(&j, s->cfg.url);
    sdi_json_key(&j, "outcome");
    sdi_json_string(&j, outcome ? outcome : "");
    sdi_json_key(&j, "calls");
    sdi_json_int(&j, s->calls);
    sdi_json_key(&j, "tokens");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "prompt");
    sdi_json_int(&j, s->prompt_tokens);
    sdi_json_key(&j, "completion");
    sdi_json_int(&j, s->completion_tokens);
    sdi_json_key(&j, "total");
    sdi_json_int(&j, s->total_tokens);
    sdi_json_end_object(&j);
    sdi_json_key(&j, "budget");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "calls");
    sdi_json_int(&j, s->cfg.max_calls);
    sdi_json_key(&j, "tokens");
    sdi_json_int(&j, s->cfg.max_tokens);
    sdi_json_key(&j, "wall_s");
    sdi_json_number(&j, s->cfg.max_wall_s);
    sdi_json_end_object(&j);
    sdi_json_key(&j, "wall_s");
    sdi_json_number(&j, sdi_now() - s->t_start);
    /* The events so far, closed in a copy so the conversation can keep logging. */
    sdi_json ev = s->events;
    sd_status st = SD_OK;
    char *events = NULL;
    if (ev.failed || ev.buf == NULL) {
        st = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the transcript");
    } else {
        size_t n = ev.len;
        events = sdi_malloc(n + 2);
        if (events == NULL) {
            st = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the transcript");
        } else {
            memcpy(events, ev.buf, n);
            events[n] = ']';
            events[n + 1] = '\0';
        }
    }
    if (st == SD_OK) {
        sdi_json_key(&j, "events");
        sdi_json_raw(&j, events);
        sdi_json_end_object(&j);
        st = sdi_json_finish(&j);
    }
    if (st == SD_OK) {
        *out = j.buf;
        j.buf = NULL;
    }
    sdi_free(events);
    sdi_json_free(&j);
    return st;
}

/* ------------------------------------------------------------------ the call */

#ifdef SD_HAVE_CURL
typedef struct {
    char *p;
    size_t len, cap;
    bool too_big;
} body_buf;

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    body_buf *b = arg;
    size_t n = size * nmemb;
    if (b->len + n + 1 > MAX_RESPONSE_BYTES) {
        b->too_big = true;
        return 0; /* aborts the transfer */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *q = sdi_realloc_array(b->p, cap, 1);
        if (q == NULL)
            return 0;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return n;
}

/* One HTTP call in the transcript (built with libcurl only: nothing else makes calls). */
static void log_call(sdi_agent_conversation *s, double wall, long http, const char *error, long pt, long ct, long tt)
{
    sdi_json *j = &s->events;
    sdi_json_begin_object(j);
    sdi_json_key(j, "type");
    sdi_json_string(j, "call");
    sdi_json_key(j, "call");
    sdi_json_int(j, s->calls);
    sdi_json_key(j, "wall_s");
    sdi_json_number(j, wall);
    sdi_json_key(j, "http_status");
    sdi_json_int(j, http);
    if (error != NULL) {
        sdi_json_key(j, "error");
        sdi_json_string(j, error);
    }
    sdi_json_key(j, "usage");
    sdi_json_begin_object(j);
    sdi_json_key(j, "prompt_tokens");
    sdi_json_int(j, pt);
    sdi_json_key(j, "completion_tokens");
    sdi_json_int(j, ct);
    sdi_json_key(j, "total_tokens");
    sdi_json_int(j, tt);
    sdi_json_end_object(j);
    sdi_json_end_object(j);
}

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init = CURLE_OK;
static void curl_init_once(void) { g_curl_init = curl_global_init(CURL_GLOBAL_DEFAULT); }
#endif

sd_status sdi_agent_chat(sdi_agent_conversation *s, const char **reply)
{
    *reply = NULL;
#ifndef SD_HAVE_CURL
    (void)s;
    return SDI_ERR(SD_ERR_UNSUPPORTED, "the agent lowering backend needs libcurl: this library was built without it");
#else
    char *body = NULL, *content = NULL;
    body_buf resp = {0};
    struct curl_slist *headers = NULL;
    CURL *h = NULL;
    char auth[600];
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(body);                                                                    \
        sdi_free(content);                                                                 \
        sdi_free(resp.p);                                                                  \
        curl_slist_free_all(headers);                                                      \
        if (h)                                                                             \
            curl_easy_cleanup(h);                                                          \
        memset(auth, 0, sizeof auth);                                                      \
    } while (0)
    memset(auth, 0, sizeof auth);
    pthread_once(&g_curl_once, curl_init_once);
    if (g_curl_init != CURLE_OK)
        return SDI_ERR(SD_ERR_IO, "libcurl initialisation failed: %s", curl_easy_strerror(g_curl_init));
    log_messages(s);
    SD_TRY(sdi_agent_request_json(s->cfg.model, s->msgs, s->nmsgs, &body));
    s->calls++;
    h = curl_easy_init();
    if (h == NULL) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "curl_easy_init failed");
    }
    headers = curl_slist_append(headers, "Content-Type: application/json");
    if (s->cfg.key[0]) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", s->cfg.key);
        struct curl_slist *nh = curl_slist_append(headers, auth);
        if (nh != NULL)
            headers = nh;
    }
    curl_easy_setopt(h, CURLOPT_URL, s->cfg.url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* timeouts without SIGALRM (threads) */
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(s->cfg.request_timeout_s * 1e3));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(s->cfg.request_timeout_s * 1e3));
    curl_easy_setopt(h, CURLOPT_USERAGENT, "sparseditto-agent");
    double t0 = sdi_now();
    CURLcode rc = curl_easy_perform(h);
    double wall = sdi_now() - t0;
    long http = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    char err[512];
    if (rc != CURLE_OK) {
        snprintf(err, sizeof err, "%s%s (after %.1f s)",
                 rc == CURLE_OPERATION_TIMEDOUT ? "no answer within the request timeout: " : "",
                 resp.too_big ? "response larger than 16 MiB" : curl_easy_strerror(rc), wall);
        log_call(s, wall, http, err, 0, 0, 0);
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "agent: %s: %s", s->cfg.url, err);
    }
    if (http != 200) {
        snprintf(err, sizeof err, "HTTP %ld: %.300s", http, resp.p ? resp.p : "");
        log_call(s, wall, http, err, 0, 0, 0);
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_IO, "agent: %s: %s", s->cfg.url, err);
    }
    long pt = 0, ct = 0, tt = 0;
    sd_status st = sdi_agent_parse_response(resp.p ? resp.p : "", &content, &pt, &ct, &tt);
    if (tt == 0)
        tt = pt + ct;
    s->prompt_tokens += pt;
    s->completion_tokens += ct;
    s->total_tokens += tt;
    log_call(s, wall, http, st == SD_OK ? NULL : sd_last_error(), pt, ct, tt);
    if (st != SD_OK) {
        SD_FREE_ALL;
        return st;
    }
    SD_TRY(sdi_agent_add(s, "assistant", content));
    *reply = s->msgs[s->nmsgs - 1].content;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
#endif
}
