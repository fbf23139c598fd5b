/* src/core/mtx_read.c: the Matrix Market parser: a hand-written tokenizer with an exact
 * fast path for decimals, banner and size lines, symmetric expansion, and
 * canonicalisation into CSR through the COO staging buffer. The lines come from the
 * buffered input of mtx_lines.c. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mtx_lines.h"

const char *sdi_mtx_field_name(sdi_mtx_field f)
{
    switch (f) {
    case SDI_MTX_REAL: return "real";
    case SDI_MTX_INTEGER: return "integer";
    case SDI_MTX_PATTERN: return "pattern";
    }
    return "unknown";
}

const char *sdi_mtx_symmetry_name(sdi_mtx_symmetry s)
{
    switch (s) {
    case SDI_MTX_GENERAL: return "general";
    case SDI_MTX_SYMMETRIC: return "symmetric";
    case SDI_MTX_SKEW_SYMMETRIC: return "skew-symmetric";
    case SDI_MTX_HERMITIAN: return "hermitian";
    }
    return "unknown";
}

/* ================================================================== numbers */

/* 10^k as doubles; exact up to 10^22, correctly rounded beyond (compiler literals). */
static const double k_pow10[65] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12,
    1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25,
    1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38,
    1e39, 1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47, 1e48, 1e49, 1e50, 1e51,
    1e52, 1e53, 1e54, 1e55, 1e56, 1e57, 1e58, 1e59, 1e60, 1e61, 1e62, 1e63, 1e64};

/* strtod for what the fast path does not handle: words (inf, nan), hex, huge
 * exponents, results near a float rounding boundary. The text is NUL-terminated, so
 * strtod stops inside it. */
static sdi_num_status value_slow(const char *p, const char **end, float *out)
{
    /* strtod skips leading white space (\v, \f, even line ends) and would read the
     * next line's number: a token never starts with it. */
    if (*p == '\0' || (*p >= '\t' && *p <= '\r') || *p == ' ') {
        *end = p;
        return SDI_NUM_SYNTAX;
    }
    char *e = NULL;
    errno = 0;
    double d = strtod(p, &e);
    *end = e;
    if (e == p)
        return SDI_NUM_SYNTAX;
    if (isnan(d))
        return SDI_NUM_NONFINITE;
    if (isinf(d))
        return errno == ERANGE ? SDI_NUM_OVERFLOW : SDI_NUM_NONFINITE;
    float f = (float)d;
    if (isinf(f))
        return SDI_NUM_OVERFLOW;
    *out = f;
    return SDI_NUM_OK;
}

/* The mantissa (≤ 19 significant digits) is gathered as a uint64 and scaled by one
 * power of ten in double. When the mantissa fits 53 bits and |exponent| ≤ 22 the
 * double is correctly rounded (one rounding of exact operands), hence equal to
 * strtod's, and so is the float. Otherwise the double is within a few ulps of the true
 * value, and the float rounding agrees with strtod's unless the double sits near a
 * float rounding midpoint (low 29 mantissa bits near 0x10000000): those few inputs,
 * and the float subnormal range, go to strtod. */
static inline sdi_num_status value_fast(const char *p, bool integer, const char **end,
                                        float *out)
{
    const char *s = p;
    bool neg = false;
    if (*s == '-') {
        neg = true;
        s++;
    } else if (*s == '+') {
        s++;
    }
    uint64_t m = 0;
    int nd = 0;         /* significant digits held in m */
    int64_t e10 = 0;    /* value = m · 10^e10 (before dropped digits) */
    bool any = false, dropped = false;
    while (is_digit(*s)) {
        any = true;
        unsigned d = (unsigned)(*s - '0');
        if (nd < 19) {
            m = m * 10 + d;
            nd += (m != 0);
        } else {
            e10++;
            dropped |= (d != 0);
        }
        s++;
    }
    if (*s == '.') {
        if (integer) {
            *end = s;
            return SDI_NUM_DECIMAL;
        }
        s++;
        while (is_digit(*s)) {
            any = true;
            unsigned d = (unsigned)(*s - '0');
            if (nd < 19) {
                m = m * 10 + d;
                nd += (m != 0);
                e10--;
            } else {
                dropped |= (d != 0);
            }
            s++;
        }
    }
    if (!any) {
        if (integer) {
            *end = s;
            return SDI_NUM_SYNTAX;
        }
        return value_slow(p, end, out); /* inf, nan, ".", "-", … */
    }
    if (*s == 'e' || *s == 'E') {
        if (integer) {
            *end = s;
            return SDI_NUM_DECIMAL;
        }
        s++;
        bool eneg = false;
        if (*s == '-') {
            eneg = true;
            s++;
        } else if (*s == '+') {
            s++;
        }
        if (!is_digit(*s)) {
            *end = s;
            return SDI_NUM_SYNTAX;
        }
        int64_t x = 0;
        while (is_digit(*s)) {
            if (x < 1000000)
                x = x * 10 + (*s - '0');
            s++;
        }
        e10 += eneg ? -x : x;
    }
    if (!is_end(*s)) {
        if (integer) {
            *end = s;
            return SDI_NUM_SYNTAX;
        }
        return value_slow(p, end, out); /* hex floats and other forms strtod knows */
    }
    *end = s;
    if (m == 0) {
        *out = neg ? -0.0f : 0.0f;
        return SDI_NUM_OK;
    }
    if (integer && e10 > 0)
        return value_slow(p, end, out); /* more than 19 digits: strtod rounds exactly */
    if (e10 < -64 || e10 > 64)
        return value_slow(p, end, out);
    double d = (double)m;
    bool exact = m <= (UINT64_C(1) << 53) && !dropped && e10 >= -22 && e10 <= 22;
    if (e10 >= 0)
        d *= k_pow10[e10];
    else
        d /= k_pow10[-e10];
    if (!exact) {
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        int64_t low = (int64_t)(bits & ((UINT64_C(1) << 29) - 1)) - (INT64_C(1) << 28);
        if ((low < 0 ? -low : low) <= 16 || d < 0x1p-125)
            return value_slow(p, end, out);
    }
    float f = (float)d;
    if (isinf(f))
        return SDI_NUM_OVERFLOW;
    *out = neg ? -f : f;
    return SDI_NUM_OK;
}

sdi_num_status sdi_parse_value(const char *p, bool integer, const char **end, float *out)
{
    return value_fast(p, integer, end, out);
}

/* ================================================================== messages */

/* Copies the token at p (up to a blank, a line end or q) for a message. */
static const char *token_text(const char *p, const char *q, char *dst, size_t cap)
{
    size_t n = 0;
    if (p < q && *p == '\0') { /* a NUL byte inside the text */
        dst[n++] = '?';
        p++;
    }
    while (p < q && !is_end(*p) && n + 4 < cap) {
        unsigned char c = (unsigned char)*p++;
        dst[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (p < q && !is_end(*p)) {
        memcpy(dst + n, "...", 3);
        n += 3;
    }
    dst[n] = '\0';
    return dst;
}

/* ================================================================== header */

typedef struct {
    sdi_mtx_field field;
    sdi_mtx_symmetry symmetry;
    bool mirror; /* symmetric, skew-symmetric or hermitian */
    uint64_t rows, cols;
    int64_t declared, nread;
    sdi_coo coo;
} mtx_state;

static bool line_blank(const char *p, const char *e)
{
    while (p < e && is_blank(*p))
        p++;
    return p == e;
}

/* Next blank-separated word of [*p, e), lower-cased into w (truncated); 0 at the end. */
static size_t next_word(const char **p, const char *e, char *w, size_t cap)
{
    const char *s = *p;
    while (s < e && is_blank(*s))
        s++;
    size_t n = 0, len = 0;
    while (s < e && !is_blank(*s)) {
        char c = *s++;
        if (n + 1 < cap)
            w[n++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
        len++;
    }
    w[n] = '\0';
    *p = s;
    return len;
}

#define SDI_BANNER_HINT "'%%%%MatrixMarket matrix coordinate <field> <symmetry>'"

static sd_status parse_banner(sdi_mtx_reader *r, mtx_state *st)
{
    const char *ls = NULL, *le = NULL;
    bool got = false;
    for (;;) {
        sd_status s = sdi_mtx_reader_line(r, &ls, &le, &got);
        if (s != SD_OK)
            return s;
        if (!got)
            return r->line == 0
                       ? SDI_ERR(SD_ERR_PARSE, "line 1: empty file (expected the banner "
                                               SDI_BANNER_HINT ")")
                       : SDI_ERR(SD_ERR_PARSE, "line %lld: no Matrix Market banner "
                                               "before the end of the file",
                                 (long long)r->line);
        if (r->line == 1 && le - ls >= 3 && memcmp(ls, "\xEF\xBB\xBF", 3) == 0)
            ls += 3; /* UTF-8 byte order mark */
        if (!line_blank(ls, le))
            break;
    }
    long long ln = (long long)r->line;
    char w[6][32];
    int nw = 0;
    const char *p = ls;
    while (nw < 6 && next_word(&p, le, w[nw], sizeof w[nw]) > 0)
        nw++;
    if (nw == 0 || strcmp(w[0], "%%matrixmarket") != 0)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: not a Matrix Market file (expected the banner "
                                     SDI_BANNER_HINT ")", ln);
    if (nw < 5)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: incomplete banner (expected " SDI_BANNER_HINT
                                     ")", ln);
    if (strcmp(w[1], "matrix") != 0)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "line %lld: Matrix Market object '%s' is not supported (only 'matrix')",
                       ln, w[1]);
    if (strcmp(w[2], "array") == 0)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "line %lld: dense 'array' files are not supported (only 'coordinate')",
                       ln);
    if (strcmp(w[2], "coordinate") != 0)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: unknown format '%s' in the banner (expected "
                                     "'coordinate')", ln, w[2]);
    if (strcmp(w[3], "complex") == 0)
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "line %lld: complex matrices are not supported (FP32 real values only)",
                       ln);
    if (strcmp(w[3], "real") == 0 || strcmp(w[3], "double") == 0)
        st->field = SDI_MTX_REAL;
    else if (strcmp(w[3], "integer") == 0)
        st->field = SDI_MTX_INTEGER;
    else if (strcmp(w[3], "pattern") == 0)
        st->field = SDI_MTX_PATTERN;
    else
        return SDI_ERR(SD_ERR_PARSE, "line %lld: unknown field '%s' in the banner (expected "
                                     "real, integer, pattern or complex)", ln, w[3]);
    if (strcmp(w[4], "general") == 0)
        st->symmetry = SDI_MTX_GENERAL;
    else if (strcmp(w[4], "symmetric") == 0)
        st->symmetry = SDI_MTX_SYMMETRIC;
    else if (strcmp(w[4], "skew-symmetric") == 0)
        st->symmetry = SDI_MTX_SKEW_SYMMETRIC;
    else if (strcmp(w[4], "hermitian") == 0)
        st->symmetry = SDI_MTX_HERMITIAN;
    else
        return SDI_ERR(SD_ERR_PARSE, "line %lld: unknown symmetry '%s' in the banner (expected "
                                     "general, symmetric, skew-symmetric or hermitian)", ln, w[4]);
    if (nw > 5)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: unexpected '%s' after the symmetry in the banner",
                       ln, w[5]);
    if (st->field == SDI_MTX_PATTERN && st->symmetry == SDI_MTX_SKEW_SYMMETRIC)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: a pattern matrix cannot be skew-symmetric", ln);
    st->mirror = st->symmetry != SDI_MTX_GENERAL;
    r->comments = true;
    return SD_OK;
}

/* One unsigned decimal of the size line; *big set when it exceeds 19 digits. */
static bool size_number(const char **p, const char *e, uint64_t *v, bool *big)
{
    const char *s = *p;
    while (s < e && is_blank(*s))
        s++;
    if (s == e || !is_digit(*s))
        return false;
    uint64_t x = 0;
    int n = 0;
    *big = false;
    while (s < e && is_digit(*s)) {
        if (x == 0 && *s == '0') {
            s++;
            continue;
        }
        if (++n > 19)
            *big = true;
        else
            x = x * 10 + (uint64_t)(*s - '0');
        s++;
    }
    if (s < e && !is_blank(*s))
        return false;
    *p = s;
    *v = x;
    return true;
}

static sd_status parse_size(sdi_mtx_reader *r, mtx_state *st)
{
    const char *ls = NULL, *le = NULL;
    bool got = false;
    for (;;) {
        sd_status s = sdi_mtx_reader_line(r, &ls, &le, &got);
        if (s != SD_OK)
            return s;
        if (!got)
            return SDI_ERR(SD_ERR_PARSE,
                           "line %lld: the file ends before the size line 'rows cols entries'",
                           (long long)r->line);
        const char *p = ls;
        while (p < le && is_blank(*p))
            p++;
        if (p < le && *p != '%')
            break;
    }
    long long ln = (long long)r->line;
    const char *p = ls;
    uint64_t v[3];
    bool big[3];
    char tok[48];
    for (int k = 0; k < 3; k++) {
        if (!size_number(&p, le, &v[k], &big[k])) {
            while (p < le && is_blank(*p))
                p++;
            if (p == le)
                return SDI_ERR(SD_ERR_PARSE, "line %lld: the size line needs 3 numbers "
                                             "'rows cols entries', found %d", ln, k);
            return SDI_ERR(SD_ERR_PARSE, "line %lld: expected the size line 'rows cols "
                                         "entries', found '%s'", ln,
                           token_text(p, le, tok, sizeof tok));
        }
    }
    while (p < le && is_blank(*p))
        p++;
    if (p < le)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: unexpected '%s' after 'rows cols entries' "
                                     "on the size line", ln, token_text(p, le, tok, sizeof tok));
    static const char *what[2] = {"rows", "columns"};
    for (int k = 0; k < 2; k++)
        if (big[k] || v[k] > (uint64_t)INT32_MAX)
            return SDI_ERR(SD_ERR_PARSE, "line %lld: %s%llu %s exceed the int32 index range "
                                         "(at most %d)", ln, big[k] ? "more than " : "",
                           (unsigned long long)v[k], what[k], INT32_MAX);
    if (big[2] || v[2] > (uint64_t)INT64_MAX)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: %s%llu entries exceed the int64 range", ln,
                       big[2] ? "more than " : "", (unsigned long long)v[2]);
    st->rows = v[0];
    st->cols = v[1];
    st->declared = (int64_t)v[2];
    if (st->mirror && v[0] != v[1])
        return SDI_ERR(SD_ERR_PARSE, "line %lld: a %s matrix must be square, this one is "
                                     "%llu x %llu", ln, sdi_mtx_symmetry_name(st->symmetry),
                       (unsigned long long)v[0], (unsigned long long)v[1]);
    if (st->mirror && st->declared > INT64_MAX / 2)
        return SDI_ERR(SD_ERR_PARSE, "line %lld: %lld entries would exceed the int64 range "
                                     "after symmetric expansion", ln, (long long)st->declared);
    return SD_OK;
}

/* ================================================================== entries */

static inline sd_status coo_add(sdi_coo *c, int32_t i, int32_t j, float v)
{
    if (c->nnz < c->cap) {
        c->ri[c->nnz] = i;
        c->ci[c->nnz] = j;
        c->v[c->nnz] = v;
        c->nnz++;
        return SD_OK;
    }
    return sdi_coo_push(c, i, j, v);
}

/* A cold path: the message for a malformed index at p (what = "row" or "column"). */
static sd_status index_error(long long ln, const char *what, const char *p, const char *q,
                             uint64_t limit)
{
    char tok[48];
    if (p == q || is_eol(*p))
        return SDI_ERR(SD_ERR_PARSE, "line %lld: missing the %s index", ln, what);
    if (*p == '-' && p + 1 < q && is_digit(p[1]))
        return SDI_ERR(SD_ERR_PARSE, "line %lld: %s index %s out of range [1, %llu]", ln, what,
                       token_text(p, q, tok, sizeof tok), (unsigned long long)limit);
    return SDI_ERR(SD_ERR_PARSE, "line %lld: bad %s index '%s'", ln, what,
                   token_text(p, q, tok, sizeof tok));
}

static sd_status value_error(long long ln, sdi_num_status ns, const char *p, const char *q)
{
    char tok[48];
    token_text(p, q, tok, sizeof tok);
    switch (ns) {
    case SDI_NUM_DECIMAL:
        return SDI_ERR(SD_ERR_PARSE, "line %lld: decimal value '%s' in an integer field", ln,
                       tok);
    case SDI_NUM_NONFINITE: {
        const char *s = p + (*p == '-' || *p == '+');
        bool nan = (*s == 'n' || *s == 'N');
        return SDI_ERR(SD_ERR_PARSE, "line %lld: value '%s' is %s", ln, tok,
                       nan ? "NaN" : "infinite (Inf)");
    }
    case SDI_NUM_OVERFLOW:
        return SDI_ERR(SD_ERR_PARSE, "line %lld: value '%s' overflows FP32 (largest %.9g)", ln,
                       tok, (double)FLT_MAX);
    default:
        return SDI_ERR(SD_ERR_PARSE, "line %lld: bad value '%s'", ln, tok);
    }
}

/* Parses the whole lines [pos, chunk_end): entries, blank lines and comments. */
static sd_status parse_chunk(sdi_mtx_reader *r, mtx_state *st)
{
    const char *p = r->buf + r->pos, *q = r->buf + r->chunk_end;
    int64_t line = r->line;
    sdi_coo *c = &st->coo;
    const uint64_t rows = st->rows, cols = st->cols;
    const bool pattern = st->field == SDI_MTX_PATTERN;
    const bool integer = st->field == SDI_MTX_INTEGER;
    const bool mirror = st->mirror;
    const bool skew = st->symmetry == SDI_MTX_SKEW_SYMMETRIC;
    char tok[48];
    sd_status s = SD_OK;
#define ENTRY_FAIL(expr)                                                                   \
    do {                                                                                   \
        s = (expr);                                                                        \
        goto fail;                                                                         \
    } while (0)
    const char *ls = p;
    while (p < q) {
        line++;
        ls = p;
        while (is_blank(*p))
            p++;
        if (is_digit(*p)) {
            if (st->nread == st->declared)
                ENTRY_FAIL(SDI_ERR(SD_ERR_PARSE, "line %lld: more entries than the %lld "
                                                 "declared on the size line",
                                   (long long)line, (long long)st->declared));
            uint64_t i = 0, j = 0;
            const char *it = p;
            do {
                if (i < (UINT64_C(1) << 40))
                    i = i * 10 + (uint64_t)(*p - '0');
                p++;
            } while (is_digit(*p));
            if (!is_blank(*p))
                ENTRY_FAIL(is_eol(*p) || p == q
                               ? SDI_ERR(SD_ERR_PARSE, "line %lld: missing the column index",
                                         (long long)line)
                               : index_error(line, "row", it, q, rows));
            while (is_blank(*p))
                p++;
            if (!is_digit(*p))
                ENTRY_FAIL(index_error(line, "column", p, q, cols));
            const char *jt = p;
            do {
                if (j < (UINT64_C(1) << 40))
                    j = j * 10 + (uint64_t)(*p - '0');
                p++;
            } while (is_digit(*p));
            if (p < q && !is_blank(*p) && !is_eol(*p))
                ENTRY_FAIL(index_error(line, "column", jt, q, cols));
            float v = 1.0f;
            if (!pattern) {
                while (is_blank(*p))
                    p++;
                if (p == q || is_eol(*p))
                    ENTRY_FAIL(SDI_ERR(SD_ERR_PARSE, "line %lld: missing the value",
                                       (long long)line));
                const char *vt = p, *ve = p;
                sdi_num_status ns = value_fast(p, integer, &ve, &v);
                if (ns != SDI_NUM_OK || (ve < q && !is_end(*ve)))
                    ENTRY_FAIL(value_error(line, ns == SDI_NUM_OK ? SDI_NUM_SYNTAX : ns, vt, q));
                p = ve;
            }
            while (is_blank(*p))
                p++;
            if (p < q && !is_eol(*p))
                ENTRY_FAIL(SDI_ERR(SD_ERR_PARSE, "line %lld: unexpected '%s' after the entry "
                                                 "(expected %d numbers)",
                                   (long long)line, token_text(p, q, tok, sizeof tok),
                                   pattern ? 2 : 3));
            if ((size_t)(p - ls) > SDI_MTX_LINE_MAX)
                ENTRY_FAIL(sdi_mtx_line_too_long((long long)line, ls, (size_t)(p - ls)));
            if (i - 1 >= rows)
                ENTRY_FAIL(SDI_ERR(SD_ERR_PARSE, "line %lld: row index %llu out of range "
                                                 "[1, %llu]",
                                   (long long)line, (unsigned long long)i,
                                   (unsigned long long)rows));
            if (j - 1 >= cols)
                ENTRY_FAIL(SDI_ERR(SD_ERR_PARSE, "line %lld: column index %llu out of range "
                                                 "[1, %llu]",
                                   (long long)line, (unsigned long long)j,
                                   (unsigned long long)cols));
            int32_t ii = (int32_t)(i - 1), jj = (int32_t)(j - 1);
            if (skew && ii == jj && v != 0.0f)
                ENTRY_FAIL(SDI_ERR(SD_ERR_PARSE, "line %lld: nonzero diagonal entry (%llu, %llu) "
                                                 "in a skew-symmetric matrix",
                                   (long long)line, (unsigned long long)i,
                                   (unsigned long long)j));
            if ((s = coo_add(c, ii, jj, v)) != SD_OK)
                goto fail;
            if (mirror && ii != jj && (s = coo_add(c, jj, ii, skew ? -v : v)) != SD_OK)
                goto fail;
            st->nread++;
        } else if (*p == '%') {
            p = find_eol(p, q);
        } else if (p < q && !is_eol(*p)) {
            if (*p == '-' && is_digit(p[1]))
                ENTRY_FAIL(index_error(line, "row", p, q, rows));
            ENTRY_FAIL(SDI_ERR(SD_ERR_PARSE, "line %lld: expected an entry 'row column%s', "
                                             "found '%s'",
                               (long long)line, pattern ? "" : " value",
                               token_text(p, q, tok, sizeof tok)));
        } else if ((size_t)(p - ls) > SDI_MTX_LINE_MAX) { /* a blank line */
            ENTRY_FAIL(sdi_mtx_line_too_long((long long)line, ls, (size_t)(p - ls)));
        }
        if (p < q)
            p += (*p == '\r' && p + 1 < q && p[1] == '\n') ? 2 : 1;
    }
#undef ENTRY_FAIL
    r->pos = r->chunk_end;
    r->line = line;
    return SD_OK;
fail:
    r->line = line;
    if (s == SD_ERR_PARSE) {
        /* A line too long is reported as such whatever else is wrong with it, as it is
         * when it does not fit the buffer (mtx_lines.c): the message must not depend on
         * where the block boundaries fall. */
        const char *e = find_eol(ls, q);
        if ((size_t)(e - ls) > SDI_MTX_LINE_MAX)
            return sdi_mtx_line_too_long((long long)line, ls, (size_t)(e - ls));
    }
    return s;
}

/* ================================================================== the reader */

/* Row pointers cost 8 bytes per row whatever the file holds, and a header of a few bytes
 * may declare 2^31 rows. Memory must follow what is read: rows beyond 2^24 (128 MiB of
 * row pointers) are accepted only up to 16 per byte of text actually read. */
#define SDI_FREE_ROWS (INT64_C(1) << 24)
#define SDI_ROWS_PER_BYTE 16

static sd_status mtx_parse(sdi_mtx_reader *r, sd_csr *out, sdi_mtx_info *info)
{
    mtx_state st;
    memset(&st, 0, sizeof st);
#define SD_FREE_ALL sdi_coo_free(&st.coo)
    double t0 = sdi_now();
    SD_TRY(parse_banner(r, &st));
    SD_TRY(parse_size(r, &st));
    int64_t hint = st.mirror ? 2 * st.declared : st.declared;
    SD_TRY(sdi_coo_init(&st.coo, (int32_t)st.rows, (int32_t)st.cols, hint));
    for (;;) {
        if (r->pos >= r->chunk_end) {
            bool more = false;
            SD_TRY(sdi_mtx_reader_refill(r, &more));
            if (!more)
                break;
        }
        SD_TRY(parse_chunk(r, &st));
    }
    if (st.nread < st.declared) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_PARSE, "line %lld: the file ends after %lld of the %lld declared "
                                     "entries", (long long)(r->line > 0 ? r->line : 1),
                       (long long)st.nread, (long long)st.declared);
    }
    int64_t limit = r->text_bytes > INT64_MAX / SDI_ROWS_PER_BYTE
                        ? INT64_MAX
                        : r->text_bytes * SDI_ROWS_PER_BYTE;
    if (limit < SDI_FREE_ROWS)
        limit = SDI_FREE_ROWS;
    if ((int64_t)st.rows > limit) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY,
                       "refusing %.1f GB of row pointers for %llu rows declared by a file of "
                       "%lld bytes holding %lld entries (limit: %d rows per byte read, at "
                       "least %lld)", 8.0 * ((double)st.rows + 1) / 1e9,
                       (unsigned long long)st.rows, (long long)r->text_bytes,
                       (long long)st.nread, SDI_ROWS_PER_BYTE, (long long)SDI_FREE_ROWS);
    }
    double t1 = sdi_now();
    int64_t dups = 0;
    SD_TRY(sdi_coo_to_csr(&st.coo, out, &dups));
    sdi_coo_free(&st.coo);
#undef SD_FREE_ALL
    /* Every value was checked on reading; only sums of duplicates can leave FP32. */
    if (dups > 0) {
        for (int32_t i = 0; i < out->rows; i++)
            for (int64_t k = out->rowptr[i]; k < out->rowptr[i + 1]; k++)
                if (isinf(out->vals[k])) {
                    int32_t j = out->colind[k];
                    sd_csr_free(out);
                    return SDI_ERR(SD_ERR_PARSE, "duplicate entries at (%d, %d) sum beyond "
                                                 "the FP32 range", i + 1, j + 1);
                }
    }
    if (info != NULL) {
        info->format = SDI_FORMAT_MTX;
        info->field = st.field;
        info->symmetry = st.symmetry;
        info->rows = out->rows;
        info->cols = out->cols;
        info->nnz_declared = st.declared;
        info->nnz_stored = st.nread;
        info->nnz = out->nnz;
        info->n_duplicates = dups;
        info->text_bytes = r->text_bytes;
        info->lines = r->line;
        info->parse_seconds = t1 - t0;
        info->build_seconds = sdi_now() - t1;
    }
    return SD_OK;
}

/* One path for inputs and memory: r holds the source and the block size. */
static sd_status mtx_read(sdi_mtx_reader *r, bool gzip, sd_csr *out, sdi_mtx_info *info)
{
    sd_status s = sdi_mtx_reader_open(r, gzip);
    if (s == SD_OK)
        s = mtx_parse(r, out, info);
    if (s == SD_OK && info != NULL)
        info->gzip = gzip;
    sdi_mtx_reader_close(r);
    if (s != SD_OK)
        sd_csr_free(out);
    return s;
}

sd_status sdi_mtx_read_input(sdi_input *in, sd_csr *out, sdi_mtx_info *info)
{
    sdi_mtx_reader r;
    memset(&r, 0, sizeof r);
    if (info != NULL)
        memset(info, 0, sizeof *info);
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "output matrix is NULL");
    memset(out, 0, sizeof *out);
    if (in == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "input is NULL");
    r.in = in;
    r.block = SDI_MTX_BLOCK;
    /* gzip is what starts with its magic bytes, whatever the name; the bytes were read
     * when the input was opened, so a pipe needs no rewinding. */
    bool gzip = in->head_len >= 2 && in->head[0] == 0x1f && in->head[1] == 0x8b;
    return mtx_read(&r, gzip, out, info);
}

sd_status sdi_mtx_read_mem(const char *buf, size_t len, size_t block_size, sd_csr *out,
                           sdi_mtx_info *info)
{
    sdi_mtx_reader r;
    memset(&r, 0, sizeof r);
    if (info != NULL)
        memset(info, 0, sizeof *info);
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "output matrix is NULL");
    memset(out, 0, sizeof *out);
    if (buf == NULL && len > 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "buffer is NULL");
    r.mem = (const unsigned char *)buf;
    r.mem_len = len;
    r.block = block_size == 0 ? SDI_MTX_BLOCK : block_size;
    bool gzip = len >= 2 && r.mem[0] == 0x1f && r.mem[1] == 0x8b;
    return mtx_read(&r, gzip, out, info);
}
