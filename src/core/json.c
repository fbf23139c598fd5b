/* src/core/json.c: a small streaming JSON writer (commas, nesting, escaping). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

void sdi_json_init(sdi_json *j, int indent)
{
    memset(j, 0, sizeof *j);
    j->indent = indent;
}

static void put(sdi_json *j, const char *s, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *b = sdi_realloc_array(j->buf, cap, 1);
        if (b == NULL) {
            j->failed = true;
            return;
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(sdi_json *j, const char *s) { put(j, s, strlen(s)); }

static void newline(sdi_json *j)
{
    if (j->indent <= 0)
        return;
    put(j, "\n", 1);
    for (int d = 0; d < j->depth * j->indent; d++)
        put(j, " ", 1);
}

/* Called before every value or key: emits the separating comma and layout. */
static void before_value(sdi_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        if (j->need_comma[j->depth])
            put(j, ",", 1);
        j->need_comma[j->depth] = true;
        newline(j);
    }
}

static void open_(sdi_json *j, const char *c)
{
    before_value(j);
    puts_(j, c);
    if (j->depth + 1 >= (int)(sizeof j->need_comma / sizeof j->need_comma[0])) {
        j->failed = true;
        return;
    }
    j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_(sdi_json *j, const char *c)
{
    bool had = j->need_comma[j->depth];
    j->depth--;
    if (had)
        newline(j);
    puts_(j, c);
}

void sdi_json_begin_object(sdi_json *j) { open_(j, "{"); }
void sdi_json_end_object(sdi_json *j) { close_(j, "}"); }
void sdi_json_begin_array(sdi_json *j) { open_(j, "["); }
void sdi_json_end_array(sdi_json *j) { close_(j, "]"); }

static void quoted(sdi_json *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else {
                put(j, (const char *)p, 1);
            }
        }
    }
    put(j, "\"", 1);
}

void sdi_json_key(sdi_json *j, const char *key)
{
    before_value(j);
    quoted(j, key);
    puts_(j, j->indent > 0 ? ": " : ":");
    j->after_key = true;
}

void sdi_json_string(sdi_json *j, const char *s)
{
    before_value(j);
    if (s == NULL)
        puts_(j, "null");
    else
        quoted(j, s);
}

void sdi_json_number(sdi_json *j, double v)
{
    before_value(j);
    if (!isfinite(v)) {
        puts_(j, "null");
        return;
    }
    char b[40];
    if (v == (double)(long long)v && fabs(v) < 1e15)
        snprintf(b, sizeof b, "%lld", (long long)v);
    else
        snprintf(b, sizeof b, "%.17g", v);
    puts_(j, b);
}

void sdi_json_int(sdi_json *j, long long v)
{
    before_value(j);
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    puts_(j, b);
}

void sdi_json_bool(sdi_json *j, bool v)
{
    before_value(j);
    puts_(j, v ? "true" : "false");
}

void sdi_json_null(sdi_json *j)
{
    before_value(j);
    puts_(j, "null");
}

void sdi_json_raw(sdi_json *j, const char *text)
{
    before_value(j);
    puts_(j, text);
}

sd_status sdi_json_finish(sdi_json *j)
{
    if (j->failed)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory writing JSON");
    if (j->depth != 0)
        return SDI_ERR(SD_ERR_INTERNAL, "JSON writer: %d unclosed containers", j->depth);
    if (j->buf == NULL)
        put(j, "", 0);
    return j->failed ? SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory writing JSON") : SD_OK;
}

sd_status sdi_json_take(sdi_json *j, char **out)
{
    *out = NULL;
    sd_status s = sdi_json_finish(j);
    if (s == SD_OK) {
        *out = j->buf;
        j->buf = NULL;
    }
    sdi_json_free(j);
    return s;
}

void sdi_json_free(sdi_json *j)
{
    if (j == NULL)
        return;
    sdi_free(j->buf);
    memset(j, 0, sizeof *j);
}
