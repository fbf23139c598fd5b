/* src/core/json_parse.c: a recursive-descent JSON reader into a small DOM. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json_parse.h"

#define MAX_DEPTH 64

typedef struct {
    const char *s;
    size_t len, pos;
} parser;

static void skip_ws(parser *p)
{
    while (p->pos < p->len &&
           (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
            p->s[p->pos] == '\r'))
        p->pos++;
}

static sd_status fail(parser *p, const char *what)
{
    return SDI_ERR(SD_ERR_PARSE, "JSON: %s at byte %zu", what, p->pos);
}

static sd_status parse_value(parser *p, sdi_jvalue *v, int depth);

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(char *dst, unsigned cp)
{
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xc0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xe0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        dst[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    dst[0] = (char)(0xf0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    dst[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static sd_status parse_string(parser *p, char **out)
{
    *out = NULL;
    p->pos++; /* opening quote */
    size_t start = p->pos;
    size_t end = start;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    if (end >= p->len)
        return fail(p, "unterminated string");
    /* The decoded text is never longer than the escaped one. */
    char *d = sdi_malloc(end - start + 1);
    if (d == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory parsing JSON");
    size_t w = 0;
    while (p->pos < end) {
        char c = p->s[p->pos++];
        if ((unsigned char)c < 0x20) {
            sdi_free(d);
            return fail(p, "control character in string");
        }
        if (c != '\\') {
            d[w++] = c;
            continue;
        }
        char e = p->s[p->pos++];
        switch (e) {
        case '"': d[w++] = '"'; break;
        case '\\': d[w++] = '\\'; break;
        case '/': d[w++] = '/'; break;
        case 'b': d[w++] = '\b'; break;
        case 'f': d[w++] = '\f'; break;
        case 'n': d[w++] = '\n'; break;
        case 'r': d[w++] = '\r'; break;
        case 't': d[w++] = '\t'; break;
        case 'u': {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                int h = p->pos < end ? hexval(p->s[p->pos]) : -1;
                if (h < 0) {
                    sdi_free(d);
                    return fail(p, "bad \\u escape");
                }
                cp = cp * 16 + (unsigned)h;
                p->pos++;
            }
            /* \uXXXX is 6 bytes of input and at most 3 of output (4 only for a pair). */
            w += put_utf8(d + w, cp);
            break;
        }
        default: sdi_free(d); return fail(p, "bad escape");
        }
    }
    d[w] = '\0';
    p->pos = end + 1;
    *out = d;
    return SD_OK;
}

static sd_status parse_number(parser *p, sdi_jvalue *v)
{
    char buf[64];
    size_t n = 0;
    while (p->pos + n < p->len && n < sizeof buf - 1 && strchr("+-0123456789.eE", p->s[p->pos + n]))
        n++;
    memcpy(buf, p->s + p->pos, n);
    buf[n] = '\0';
    char *end = NULL;
    errno = 0;
    double d = strtod(buf, &end);
    if (n == 0 || end != buf + n)
        return fail(p, "bad number");
    v->type = SDI_JNUMBER;
    v->number = d;
    p->pos += n;
    return SD_OK;
}

static sd_status parse_container(parser *p, sdi_jvalue *v, int depth, bool object)
{
    char close = object ? '}' : ']';
    v->type = object ? SDI_JOBJECT : SDI_JARRAY;
    p->pos++;
    int cap = 0;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return SD_OK;
    }
    for (;;) {
        if (v->n == cap) {
            int ncap = cap ? cap * 2 : 8;
            sdi_jvalue *items = sdi_realloc_array(v->items, (size_t)ncap, sizeof *items);
            if (items == NULL)
                return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory parsing JSON");
            v->items = items;
            if (object) {
                char **keys = sdi_realloc_array(v->keys, (size_t)ncap, sizeof *keys);
                if (keys == NULL)
                    return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory parsing JSON");
                v->keys = keys;
            }
            cap = ncap;
        }
        skip_ws(p);
        if (object) {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail(p, "expected a key");
            char *key = NULL;
            sd_status s = parse_string(p, &key);
            if (s != SD_OK)
                return s;
            v->keys[v->n] = key;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                memset(&v->items[v->n], 0, sizeof v->items[v->n]);
                v->n++;
                return fail(p, "expected ':'");
            }
            p->pos++;
        }
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        v->n++; /* counted before parsing so a failure frees it */
        sd_status s = parse_value(p, &v->items[v->n - 1], depth + 1);
        if (s != SD_OK)
            return s;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return SD_OK;
        }
        return fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static sd_status parse_value(parser *p, sdi_jvalue *v, int depth)
{
    memset(v, 0, sizeof *v);
    if (depth > MAX_DEPTH)
        return fail(p, "nesting too deep");
    skip_ws(p);
    if (p->pos >= p->len)
        return fail(p, "unexpected end");
    char c = p->s[p->pos];
    if (c == '{')
        return parse_container(p, v, depth, true);
    if (c == '[')
        return parse_container(p, v, depth, false);
    if (c == '"') {
        v->type = SDI_JSTRING;
        return parse_string(p, &v->string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(p, v);
    static const struct {
        const char *word;
        sdi_jtype type;
        bool b;
    } words[] = {{"true", SDI_JBOOL, true}, {"false", SDI_JBOOL, false}, {"null", SDI_JNULL, false}};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if (p->len - p->pos >= n && memcmp(p->s + p->pos, words[i].word, n) == 0) {
            v->type = words[i].type;
            v->boolean = words[i].b;
            p->pos += n;
            return SD_OK;
        }
    }
    return fail(p, "unexpected character");
}

sd_status sdi_json_parse(const char *text, long len, sdi_jvalue *out)
{
    memset(out, 0, sizeof *out);
    if (text == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "JSON text is NULL");
    parser p = {text, len < 0 ? strlen(text) : (size_t)len, 0};
    sd_status s = parse_value(&p, out, 0);
    if (s == SD_OK) {
        skip_ws(&p);
        if (p.pos != p.len)
            s = fail(&p, "trailing characters");
    }
    if (s != SD_OK)
        sdi_jvalue_free(out);
    return s;
}

void sdi_jvalue_free(sdi_jvalue *v)
{
    if (v == NULL)
        return;
    for (int i = 0; i < v->n; i++) {
        if (v->keys)
            sdi_free(v->keys[i]);
        if (v->items)
            sdi_jvalue_free(&v->items[i]);
    }
    sdi_free(v->keys);
    sdi_free(v->items);
    sdi_free(v->string);
    memset(v, 0, sizeof *v);
}

const sdi_jvalue *sdi_jget(const sdi_jvalue *v, const char *key)
{
    if (v == NULL || v->type != SDI_JOBJECT)
        return NULL;
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

double sdi_jget_number(const sdi_jvalue *v, const char *key, double dflt)
{
    const sdi_jvalue *m = sdi_jget(v, key);
    return (m != NULL && m->type == SDI_JNUMBER) ? m->number : dflt;
}

const char *sdi_jget_string(const sdi_jvalue *v, const char *key, const char *dflt)
{
    const sdi_jvalue *m = sdi_jget(v, key);
    return (m != NULL && m->type == SDI_JSTRING) ? m->string : dflt;
}
