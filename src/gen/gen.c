/* src/gen/gen.c: the generator entry point: the spec "family:key=value,..." parser,
 * the family table (keys and help), and seeded values for matrices and dense operands. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef sd_status (*family_fn)(const sdi_gen_params *p, sd_csr *out);

typedef struct {
    const char *name;
    family_fn fn;
    const char *keys[SDI_GEN_MAX_KEYS]; /* NULL-terminated; "values" is always allowed */
    const char *help;
} family_t;

static const family_t families[] = {
    {"stencil2d", sdi_gen_stencil2d, {"n", "nx", "ny", NULL},
     "5-point 2-D stencil on an nx x ny grid (n=64 sets both); nnz = 5nxny - 2nx - 2ny"},
    {"stencil3d7", sdi_gen_stencil3d7, {"n", "nx", "ny", "nz", NULL},
     "7-point 3-D stencil on an nx x ny x nz grid (n=16 sets all)"},
    {"stencil3d27", sdi_gen_stencil3d27, {"n", "nx", "ny", "nz", NULL},
     "27-point 3-D stencil (n=16); nnz = (3n-2)^3 for a cube"},
    {"banded", sdi_gen_banded, {"n", "bw", "fill", NULL},
     "symmetric band of half-width bw=4 on n=1024 rows; each off-diagonal pair kept with "
     "probability fill=1"},
    {"blockdiag", sdi_gen_blockdiag, {"n", "b", NULL},
     "dense b x b blocks (b=16) on the diagonal of an n x n matrix (n=1024)"},
    {"uniform", sdi_gen_uniform, {"rows", "cols", "nnz", "deg", NULL},
     "nnz distinct uniformly random positions (rows=1024, cols=rows, nnz=8*rows or "
     "deg=mean row length)"},
    {"powerlaw", sdi_gen_powerlaw, {"rows", "cols", "deg", "alpha", "max", NULL},
     "Zipf row lengths P(l) ~ l^-alpha (alpha=2.2) with mean deg=8, capped at max=cols; "
     "random columns (rows=4096, cols=rows)"},
    {"rmat", sdi_gen_rmat, {"scale", "ef", "a", "b", "c", "sym", NULL},
     "R-MAT graph on 2^scale vertices (scale=12) with ef*2^scale edges (ef=16), quadrant "
     "probabilities a=0.57 b=0.19 c=0.19; sym=1 symmetric; duplicates merged"},
    {"knn", sdi_gen_knn, {"n", "k", "dim", "sym", NULL},
     "k-nearest-neighbour graph (k=8) of n=4096 random points in dim=2 (2 to 5) dimensions, "
     "numbered by grid cell; sym=1 (default) adds the reverse edges"},
    {"bimodal", sdi_gen_bimodal, {"rows", "cols", "short", "long", "frac", NULL},
     "rows of length short=4 or long=256 (a fraction frac=0.05 of rows), random columns "
     "(rows=4096, cols=rows)"},
    {"twin", sdi_gen_twin, {"name", "file", "scale", "local", NULL},
     "twin of a row of paper60.tsv (name=, file= its path; the CLI and matrix lists supply "
     "the shared one): "
     "same rows, cols, nnz and max row length, CV of row lengths tuned; scale=1 (a factor "
     "in (0, 1]) shrinks the sizes; local=0.7 is the share of columns near the diagonal"},
};
static const int nfamilies = (int)(sizeof families / sizeof families[0]);

/* ------------------------------------------------------------------ parameters */

static int key_index(const sdi_gen_params *p, const char *key)
{
    for (int k = 0; k < p->nkeys; k++)
        if (strcmp(p->key[k], key) == 0)
            return k;
    return -1;
}

bool sdi_gen_has(const sdi_gen_params *p, const char *key) { return key_index(p, key) >= 0; }

const char *sdi_gen_str(const sdi_gen_params *p, const char *key, const char *def)
{
    int k = key_index(p, key);
    return k < 0 ? def : p->value[k];
}

sd_status sdi_gen_real(const sdi_gen_params *p, const char *key, double def, double lo,
                       double hi, double *out)
{
    int k = key_index(p, key);
    if (k < 0) {
        *out = def;
        return SD_OK;
    }
    const char *text = p->value[k];
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < lo || v > hi)
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: %s: key '%s': '%s' is not a number in [%g, %g]",
                       p->family, key, text, lo, hi);
    *out = v;
    return SD_OK;
}

sd_status sdi_gen_int(const sdi_gen_params *p, const char *key, int64_t def, int64_t lo,
                      int64_t hi, int64_t *out)
{
    int k = key_index(p, key);
    if (k < 0) {
        *out = def;
        return SD_OK;
    }
    const char *text = p->value[k];
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno == 0 && end != text && *end != '\0') {
        /* 1e6 and 2.5e3 are accepted when they are integers. */
        double d = strtod(text, &end);
        if (errno == 0 && *end == '\0' && isfinite(d) && d == floor(d) && fabs(d) < 0x1p62)
            v = (long long)d;
        else
            end = (char *)text;
    }
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "gen: %s: key '%s': '%s' is not an integer in [%lld, %lld]", p->family,
                       key, text, (long long)lo, (long long)hi);
    *out = v;
    return SD_OK;
}

/* ------------------------------------------------------------------ values */

sd_status sdi_gen_values_mode_parse(const char *text, sdi_values_mode *out)
{
    if (text != NULL && strcmp(text, "uniform") == 0)
        *out = SDI_VALUES_UNIFORM;
    else if (text != NULL && strcmp(text, "int") == 0)
        *out = SDI_VALUES_SMALL_INT;
    else if (text != NULL && strcmp(text, "ones") == 0)
        *out = SDI_VALUES_ONES;
    else
        return SDI_ERR(SD_ERR_INVALID_ARG, "values '%s' is not one of uniform, int, ones",
                       text ? text : "(null)");
    return SD_OK;
}

static inline float value_of(uint64_t h, sdi_values_mode mode)
{
    switch (mode) {
    case SDI_VALUES_SMALL_INT: return (float)((int)(((h >> 32) * 5u) >> 32) - 2);
    case SDI_VALUES_ONES: return 1.0f;
    case SDI_VALUES_UNIFORM:
    default: /* 24 random bits: k·2⁻²³ − 1, exact in FP32 */
        return (float)((double)(h >> 40) * 0x1p-23 - 1.0);
    }
}

void sdi_gen_values(sd_csr *a, sdi_values_mode mode, uint64_t seed)
{
    if (a == NULL || a->vals == NULL)
        return;
    const int64_t n = a->nnz;
    float *v = a->vals;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; k++)
        v[k] = value_of(sdi_hash3(seed, SDI_STREAM_VALUES, (uint64_t)k), mode);
}

void sdi_gen_dense(float *x, int64_t n, sdi_values_mode mode, uint64_t seed)
{
    if (x == NULL)
        return;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; k++)
        x[k] = value_of(sdi_hash3(seed, SDI_STREAM_DENSE, (uint64_t)k), mode);
}

/* ------------------------------------------------------------------ the spec */

static const family_t *find_family(const char *name)
{
    for (int f = 0; f < nfamilies; f++)
        if (strcmp(families[f].name, name) == 0)
            return &families[f];
    return NULL;
}

static void family_list(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int f = 0; f < nfamilies && len < cap; f++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", f ? ", " : "", families[f].name);
}

static void key_list(const family_t *fam, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; fam->keys[k] != NULL && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s, ", fam->keys[k]);
    if (len < cap)
        snprintf(buf + len, cap - len, "values");
}

static bool key_allowed(const family_t *fam, const char *key)
{
    if (strcmp(key, "values") == 0)
        return true;
    for (int k = 0; fam->keys[k] != NULL; k++)
        if (strcmp(fam->keys[k], key) == 0)
            return true;
    return false;
}

/* sdi_gen and sdi_gen_check: parse the spec, then build (or only validate) the family. */
static sd_status gen_spec(const char *spec, uint64_t seed, bool check_only, sd_csr *out)
{
    char *buf = NULL;
    char list[512];
#define SD_FREE_ALL sdi_free(buf)
    memset(out, 0, sizeof *out);
    if (spec == NULL || spec[0] == '\0') {
        family_list(list, sizeof list);
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "gen: empty spec (want family:key=value,...; families: %s)", list);
    }
    size_t len = strlen(spec);
    buf = sdi_malloc(len + 1);
    SD_CHECK_ALLOC(buf, "the generator spec");
    memcpy(buf, spec, len + 1);
    sdi_gen_params p;
    memset(&p, 0, sizeof p);
    p.seed = seed;
    p.check_only = check_only;
    char *colon = strchr(buf, ':');
    if (colon != NULL)
        *colon = '\0';
    p.family = buf;
    const family_t *fam = find_family(buf);
    if (fam == NULL) {
        family_list(list, sizeof list);
        SDI_ERR(SD_ERR_INVALID_ARG, "gen: unknown family '%s' (families: %s)", buf, list);
        SD_FREE_ALL;
        return SD_ERR_INVALID_ARG;
    }
    if (colon != NULL) {
        char *rest = colon + 1;
        while (*rest != '\0') {
            char *comma = strchr(rest, ',');
            if (comma != NULL)
                *comma = '\0';
            char *eq = strchr(rest, '=');
            sd_status s = SD_OK;
            if (eq == NULL || eq == rest)
                s = SDI_ERR(SD_ERR_INVALID_ARG, "gen: %s: '%s' is not key=value", fam->name,
                            rest);
            else {
                *eq = '\0';
                if (!key_allowed(fam, rest)) {
                    key_list(fam, list, sizeof list);
                    s = SDI_ERR(SD_ERR_INVALID_ARG, "gen: family '%s' has no key '%s' (keys: %s)",
                                fam->name, rest, list);
                } else if (key_index(&p, rest) >= 0)
                    s = SDI_ERR(SD_ERR_INVALID_ARG, "gen: %s: key '%s' given twice", fam->name,
                                rest);
                else if (p.nkeys == SDI_GEN_MAX_KEYS)
                    s = SDI_ERR(SD_ERR_INVALID_ARG, "gen: %s: too many keys", fam->name);
                else {
                    p.key[p.nkeys] = rest;
                    p.value[p.nkeys] = eq + 1;
                    p.nkeys++;
                }
            }
            if (s != SD_OK) {
                SD_FREE_ALL;
                return s;
            }
            if (comma == NULL)
                break;
            rest = comma + 1;
        }
    }
    sdi_values_mode mode = SDI_VALUES_UNIFORM;
    const char *vtext = sdi_gen_str(&p, "values", NULL);
    if (vtext != NULL && sdi_gen_values_mode_parse(vtext, &mode) != SD_OK) {
        SDI_ERR(SD_ERR_INVALID_ARG, "gen: %s: key 'values': '%s' is not one of uniform, int, ones",
                fam->name, vtext);
        SD_FREE_ALL;
        return SD_ERR_INVALID_ARG;
    }
    sd_status s = fam->fn(&p, out);
    SD_FREE_ALL;
    if (s != SD_OK) {
        sd_csr_free(out);
        return s;
    }
    if (!check_only)
        sdi_gen_values(out, mode, seed);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_gen(const char *spec, uint64_t seed, sd_csr *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: out is NULL");
    return gen_spec(spec, seed, false, out);
}

char *sdi_gen_spec_with_table(const char *spec, const char *table)
{
    bool twin = strncmp(spec, "twin", 4) == 0 && (spec[4] == '\0' || spec[4] == ':');
    if (twin) {
        const char *colon = strchr(spec, ':');
        for (const char *p = colon; p != NULL; p = strchr(p + 1, ','))
            if (strncmp(p + 1, "file=", 5) == 0)
                twin = false;
    }
    size_t n = strlen(spec) + (twin ? strlen(table) + 8 : 0) + 1;
    char *out = sdi_malloc(n);
    if (out == NULL)
        return NULL;
    if (twin) {
        /* "twin" → "twin:file=T", "twin:" → "twin:file=T", "twin:name=x" → "...,file=T" */
        const char *sep = spec[4] == '\0' ? ":" : (spec[5] == '\0' ? "" : ",");
        snprintf(out, n, "%s%sfile=%s", spec, sep, table);
    } else {
        snprintf(out, n, "%s", spec);
    }
    return out;
}

sd_status sdi_gen_check(const char *spec)
{
    sd_csr none;
    return gen_spec(spec, 0, true, &none);
}

/* Appends text to buf word-wrapped at width columns, continuation lines indented. */
static size_t append_wrapped(char *buf, size_t len, size_t cap, const char *text, int indent,
                             int width)
{
    int col = indent;
    const char *w = text;
    while (*w != '\0' && len < cap) {
        int n = 0;
        while (w[n] != '\0' && w[n] != ' ')
            n++;
        if (col > indent && col + 1 + n > width) {
            len += (size_t)snprintf(buf + len, cap - len, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            len += (size_t)snprintf(buf + len, cap - len, " ");
            col++;
        }
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%.*s", n, w);
        col += n;
        w += n;
        while (*w == ' ')
            w++;
    }
    if (len < cap)
        len += (size_t)snprintf(buf + len, cap - len, "\n");
    return len;
}

const char *sdi_gen_help(void)
{
    static char text[8192];
    static int built = 0;
#pragma omp critical(sdi_gen_help)
    if (!built) {
        size_t len = (size_t)snprintf(text, sizeof text,
                                      "SPEC is family:key=value,key=value (keys optional, "
                                      "defaults shown).\nEvery family also takes "
                                      "values=uniform|int|ones.\n\nfamilies:\n");
        for (int f = 0; f < nfamilies && len < sizeof text; f++) {
            char keys[256];
            key_list(&families[f], keys, sizeof keys);
            len += (size_t)snprintf(text + len, sizeof text - len, "  %-12s keys: %s\n",
                                    families[f].name, keys);
            if (len < sizeof text) {
                len += (size_t)snprintf(text + len, sizeof text - len, "%15s", "");
                len = append_wrapped(text, len, sizeof text, families[f].help, 15, 88);
            }
        }
        built = 1;
    }
    return text;
}
