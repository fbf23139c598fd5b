/* tests/gpu/test_compile_spgemm.c: SpGEMM through the public API on a GPU:
 * sd_compile(SD_OP_SPGEMM) / sd_compile_spgemm → sd_spgemm, C copied back and compared
 * with the CPU reference — exactly (structure and values) with small-integer inputs —
 * on tiny rows, a long row, banded, R-MAT, rectangular A·Aᵀ, a general A·B, an empty
 * matrix and a product with nnz(C) = 0; the second compile of a pattern is a cache hit
 * with the same C; update_values; deterministic mode (bitwise-identical repeated runs);
 * describe's SpGEMM JSON; sd_device_csr_free waits for work still queued on C; the search's
 * edits of its winner (warp per B row flipped, smaller hash tables), each checked against
 * the trial the search record names as its source; linked units. Small
 * budgets keep it under a minute. Skipped (exit 77) without a device. */
#include <stdlib.h>
#include <unistd.h>

#include "core/json_parse.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "sdt.h"

static sd_context *g_ctx;

/* C back on the host (sorted CSR). */
static int download(const sd_device_csr *c, sd_csr *h)
{
    memset(h, 0, sizeof *h);
    if (sdi_csr_alloc(h, c->rows, c->cols, c->nnz) != SD_OK)
        return 0;
    int ok = sdi_copy_to_host(g_ctx, h->rowptr, c->rowptr, ((size_t)c->rows + 1) * 8, "C rows") == SD_OK;
    if (ok && c->nnz > 0)
        ok = sdi_copy_to_host(g_ctx, h->colind, c->colind, (size_t)c->nnz * 4, "C cols") == SD_OK &&
             sdi_copy_to_host(g_ctx, h->vals, c->vals, (size_t)c->nnz * 4, "C vals") == SD_OK;
    return ok;
}

/* Exact comparison with the reference (small-integer inputs sum exactly in FP32). */
static void check_exact(const char *what, const sd_csr *got, const sdi_ref_csr *want)
{
    SDT_CHECK(got->rows == want->rows && got->cols == want->cols && got->nnz == want->nnz,
              "%s: C is %dx%d nnz %lld, want %dx%d nnz %lld", what, got->rows, got->cols,
              (long long)got->nnz, want->rows, want->cols, (long long)want->nnz);
    if (got->rows != want->rows || got->nnz != want->nnz)
        return;
    int bad = 0;
    for (int32_t i = 0; i <= got->rows && bad < 3; i++)
        if (got->rowptr[i] != want->rowptr[i]) {
            SDT_CHECK(0, "%s: rowptr[%d] = %lld, want %lld", what, i, (long long)got->rowptr[i],
                      (long long)want->rowptr[i]);
            bad++;
        }
    for (int64_t e = 0; e < got->nnz && bad < 3; e++)
        if (got->colind[e] != want->colind[e] || (double)got->vals[e] != want->vals[e]) {
            SDT_CHECK(0, "%s: entry %lld: (%d, %g), want (%d, %g)", what, (long long)e,
                      got->colind[e], got->vals[e], want->colind[e], want->vals[e]);
            bad++;
        }
}

/* sd_spgemm once, C against the reference of A·B (b NULL: A·A square, A·Aᵀ otherwise).
 * *c_host (may be NULL) receives C. */
static void run_check(const char *what, sd_kernel *kern, const sd_csr *a, const sd_csr *b,
                      sd_csr *c_host)
{
    sd_csr at;
    memset(&at, 0, sizeof at);
    const sd_csr *bb = b;
    if (bb == NULL && a->rows != a->cols) {
        SDT_OK(sdi_csr_transpose(a, &at));
        bb = &at;
    } else if (bb == NULL) {
        bb = a;
    }
    sdi_ref_csr want;
    memset(&want, 0, sizeof want);
    SDT_OK(sdi_ref_spgemm(a, bb, &want));
    long live = sdi_device_alloc_live();
    sd_device_csr c;
    sd_status s = sd_spgemm(kern, &c, g_ctx->stream);
    SDT_CHECK(s == SD_OK, "%s: sd_spgemm: %s", what, sd_last_error());
    SDT_OK(sdi_stream_sync(g_ctx, what, NULL));
    sd_csr got;
    memset(&got, 0, sizeof got);
    if (s == SD_OK && download(&c, &got))
        check_exact(what, &got, &want);
    sd_device_csr_free(&c);
    SDT_CHECK(c.rowptr == NULL && c.nnz == 0, "%s: freed C zeroed", what);
    SDT_CHECK(sdi_device_alloc_live() == live, "%s: C's arrays freed (%ld live, was %ld)", what,
              sdi_device_alloc_live(), live);
    if (c_host != NULL)
        *c_host = got;
    else
        sd_csr_free(&got);
    sdi_ref_csr_free(&want);
    sd_csr_free(&at);
}

static sd_compile_options quick(void)
{
    sd_compile_options o = sd_compile_options_default();
    o.budget = 6;
    return o;
}

static sd_kernel *compile(const char *what, const sd_csr *a, const sd_csr *b,
                          const sd_compile_options *o, int expect_cache)
{
    sd_kernel *kern = NULL;
    double t0 = sdi_now();
    sd_status s = b != NULL ? sd_compile_spgemm(g_ctx, a, b, o, &kern)
                            : sd_compile(g_ctx, a, SD_OP_SPGEMM, 0, o, &kern);
    SDT_CHECK(s == SD_OK, "%s: compile: %s", what, sd_last_error());
    if (s != SD_OK)
        return NULL;
    char *json = malloc(1 << 22);
    SDT_OK(sd_kernel_describe(kern, json, 1 << 22));
    int from_cache = strstr(json, "\"from_cache\":true") != NULL;
    if (expect_cache >= 0)
        SDT_CHECK(from_cache == expect_cache, "%s: from_cache %d, want %d", what, from_cache,
                  expect_cache);
    SDT_CHECK(strstr(json, "\"op\":\"spgemm\"") != NULL && strstr(json, "\"product\"") != NULL &&
                  strstr(json, "\"peak_bytes\"") != NULL,
              "%s: describe %.300s", what, json);
    const char *fam = strstr(json, "\"family\":\"");
    printf("  %-34s %s in %6.2f s: %.50s\n", what, from_cache ? "cache hit" : "compiled ",
           sdi_now() - t0, fam ? fam + 10 : "?");
    free(json);
    return kern;
}

/* k's describe JSON parsed into *d (freed by the caller with sdi_jvalue_free, also on
 * failure); false, with a failed check naming `what`, when it cannot be had. */
static bool describe_parse(const char *what, sd_kernel *k, sdi_jvalue *d)
{
    memset(d, 0, sizeof *d);
    char *json = malloc(1 << 22);
    const bool ok = json != NULL && sd_kernel_describe(k, json, 1 << 22) == SD_OK &&
                    sdi_json_parse(json, (long)strlen(json), d) == SD_OK;
    SDT_CHECK(ok, "%s: no describe JSON", what);
    free(json);
    return ok;
}

/* Matrices with small-integer values in {-2..2}. */
static void make(const char *spec, sd_csr *a)
{
    SDT_OK(sdi_gen(spec, sdt_seed, a));
    sdi_gen_values(a, SDI_VALUES_SMALL_INT, sdt_seed + 1);
}

static void test_products(void)
{
    static const char *specs[] = {
        "uniform:rows=2000,cols=2000,deg=2",           /* tiny rows */
        "bimodal:rows=3000,cols=3000,short=3,long=1500,frac=0.002", /* long rows */
        "banded:n=20000,bw=4",
        "rmat:scale=12,ef=8",
        "uniform:rows=3000,cols=700,deg=5",            /* rectangular: A·Aᵀ */
        /* long rows over 36,000 columns: the wide CTA stripe (36,000 columns, not 2^16) */
        "bimodal:rows=36000,cols=36000,short=2,long=2500,frac=0.01",
        "uniform:rows=3000,cols=3000,deg=64", /* CTA rows of 64 B rows of 64: a warp per B row */
    };
    sd_compile_options o = quick();
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        sd_csr a;
        make(specs[i], &a);
        sd_kernel *k = compile(specs[i], &a, NULL, &o, 0);
        if (k != NULL)
            run_check(specs[i], k, &a, NULL, NULL);
        sd_kernel_destroy(k);
        sd_csr_free(&a);
    }
}

/* Whether two configurations name one plan, whichever NVRTC level built it (the search's
 * round 4 rebuilds its winner at full optimisation: " nvrtc=..." is the last field). */
static bool same_plan(const char *x, const char *y)
{
    const char *ex = strstr(x, " nvrtc="), *ey = strstr(y, " nvrtc=");
    const size_t nx = ex != NULL ? (size_t)(ex - x) : strlen(x);
    const size_t ny = ey != NULL ? (size_t)(ey - y) : strlen(y);
    return nx == ny && strncmp(x, y, nx) == 0;
}

/* Whether a round-3 trial (the winner's edits) has marker in its configuration. */
static bool edit_tried(const sdi_jvalue *trials, const char *marker)
{
    for (int i = 0; trials != NULL && i < trials->n; i++)
        if (sdi_jget_number(&trials->items[i], "round", 0) == 3 &&
            strstr(sdi_jget_string(&trials->items[i], "config", ""), marker) != NULL)
            return true;
    return false;
}

/* Whether a configuration has a mark that only the winner's edits put there: the warp
 * path off, load 100, CTA teams (cta_u). The group-table cap " gh=10 " is a sweep entry
 * too (src/plan/families/spgemm_shared.c, wide_sweep). */
static bool edit_only_mark(const char *config)
{
    static const char *const marks[] = {" wb=off", " load=100 ", " cta>"};
    for (size_t m = 0; m < sizeof marks / sizeof *marks; m++)
        if (strstr(config, marks[m]) != NULL)
            return true;
    return false;
}

/* The length of a configuration field's key: "gh" of "gh=10", "cta" of "cta>512". */
static size_t field_key(const char *field, size_t len)
{
    size_t k = 0;
    while (k < len && field[k] != '=' && field[k] != '>')
        k++;
    return k;
}

/* Whether the len bytes at field are one of the space-separated fields of list. */
static bool has_field(const char *list, const char *field, size_t len)
{
    for (const char *p = list; *p != '\0';) {
        p += strspn(p, " ");
        const size_t n = strcspn(p, " ");
        if (n == len && n > 0 && strncmp(p, field, len) == 0)
            return true;
        p += n;
    }
    return false;
}

/* Counts into *n the fields of x that y lacks; whether each has a key among keys. */
static bool fields_differ_in(const char *x, const char *y, const char *keys, int *n)
{
    bool ok = true;
    for (const char *p = x; *p != '\0';) {
        p += strspn(p, " ");
        const size_t len = strcspn(p, " ");
        if (len > 0 && !has_field(y, p, len)) {
            (*n)++;
            ok = ok && has_field(keys, p, field_key(p, len));
        }
        p += len;
    }
    return ok;
}

/* Edit trial i against the trial it names as its source (the record's "edit_of"): an
 * earlier trial that validated, whose configuration differs from the edit's in the edit's
 * fields only, with the edit's mark (the record's "edit") in the edit's (winner_edits:
 * "wb=off" / "wb=on" the warp path, "load=100" the load with group tables capped at 2^10,
 * "gh=10" the cap alone, "cta>N" CTA teams). Returns whether it holds. */
static bool check_edit(const char *what, const sdi_jvalue *trials, int i)
{
    const sdi_jvalue *e = &trials->items[i];
    const double src = sdi_jget_number(e, "edit_of", -1);
    const char *mark = sdi_jget_string(e, "edit", "");
    const char *config = sdi_jget_string(e, "config", "");
    if (!(src >= 0 && src < i && src == (int)src) || mark[0] == '\0') {
        SDT_CHECK(0, "%s: trial %d, edit \"%s\", names trial %g as its source", what, i, mark, src);
        return false;
    }
    const sdi_jvalue *s = &trials->items[(int)src];
    const char *sconfig = sdi_jget_string(s, "config", "");
    bool ok = strcmp(sdi_jget_string(s, "status", ""), sd_status_string(SD_OK)) == 0 &&
              sdi_jget_number(s, "round", 99) <= sdi_jget_number(e, "round", 0);
    SDT_CHECK(ok, "%s: trial %d's source, trial %g, did not validate before it (%s, round %g)",
              what, i, src, sdi_jget_string(s, "status", "?"), sdi_jget_number(s, "round", -1));
    bool marked;
    if (strcmp(mark, "wb=on") == 0)
        marked = strstr(config, " wb=") == NULL && has_field(sconfig, "wb=off", 6);
    else
        marked = has_field(config, mark, strlen(mark));
    const char *gh = strstr(config, " gh=");
    if (strcmp(mark, "load=100") == 0)
        marked = marked && gh != NULL && atoi(gh + 4) <= 10;
    char keys[32]; /* the fields the edit may change */
    snprintf(keys, sizeof keys, "%.*s%s", (int)field_key(mark, strlen(mark)), mark,
             strcmp(mark, "load=100") == 0 ? " gh" : "");
    int n = 0;
    const bool only = fields_differ_in(config, sconfig, keys, &n) &&
                      fields_differ_in(sconfig, config, keys, &n);
    SDT_CHECK(marked && only && n > 0,
              "%s: trial %d is not edit \"%s\" of trial %g:\n      %s\n   vs %s", what, i, mark,
              src, config, sconfig);
    return ok && marked && only && n > 0;
}

/* The trial of the winner's plan that is one of the winner's edits (it names its source),
 * else -1. The round-4 rebuild of an edited winner at full optimisation names none. */
static int winner_edit(const sdi_jvalue *trials, const char *config)
{
    for (int i = 0; trials != NULL && i < trials->n; i++)
        if (sdi_jget(&trials->items[i], "edit_of") != NULL &&
            same_plan(sdi_jget_string(&trials->items[i], "config", ""), config))
            return i;
    return -1;
}

/* On a failed expectation: the winner, its bins and every trial, to tell from the log
 * which rule did not hold. */
static void dump_search(const char *config, const sdi_jvalue *bins, const sdi_jvalue *trials)
{
    printf("    winner: %s\n", config);
    for (int i = 0; bins != NULL && i < bins->n; i++)
        printf("    bin %-7s lanes %4.0f size %6.0f rows %7.0f\n",
               sdi_jget_string(&bins->items[i], "kind", "?"),
               sdi_jget_number(&bins->items[i], "lanes", -1),
               sdi_jget_number(&bins->items[i], "size", -1),
               sdi_jget_number(&bins->items[i], "rows", -1));
    for (int i = 0; trials != NULL && i < trials->n; i++) {
        const sdi_jvalue *tr = &trials->items[i];
        printf("    trial %2d round %.0f %-9s %s", i, sdi_jget_number(tr, "round", -1),
               sdi_jget_string(tr, "status", "?"), sdi_jget_string(tr, "config", "?"));
        if (sdi_jget(tr, "edit_of") != NULL)
            printf(" (edit %s of trial %.0f)", sdi_jget_string(tr, "edit", "?"),
                   sdi_jget_number(tr, "edit_of", -1));
        printf("\n");
    }
}

/* The search measures its winner's edits (src/tune/search_measure.c, the families' edits), each validated
 * like any other candidate: the warp per B row flipped when the winner has CTA rows (CTA
 * hash, CTA or global stripes; not under SPARSEDITTO_SG_WARP_BROW=0, which compiles
 * without the path), smaller hash tables (load 100) when it has hash rows. Which plan wins
 * depends on the GPU's timings, so each edit is checked against the winner's own schedule
 * (the plan's lowering bins): tried when it applies, not tried when it does not. A winner
 * that is itself an edit (winner_edit) has the bins of the edit, not those of the plan the
 * edits came from (on the H200 the group-cap edit has won on the hash-row product and
 * moved its longest rows to CTA tables, rows the plan before the edit, and so its edits,
 * had not had; the CTA-team edit has won on it the same way, its 23 longest rows moved to
 * CTA tables): it is checked against its source instead, the trial the record
 * names (check_edit), as is every edit trial; a trial with a mark only edits make
 * (edit_only_mark) must name one. Two products, one of CTA rows (rows of 4,096 products over 3,000 columns)
 * and one of hash rows (256 products over 100,000 columns); cuSPARSE is left out so that
 * the plan is ours. Across the four compiles at least one edit must have been measured. */
static void test_winner_edits(void)
{
    static const char *specs[] = {"uniform:rows=3000,cols=3000,deg=64",
                                  "uniform:rows=100000,cols=100000,deg=16"};
    sd_compile_options o = quick();
    o.use_cache = 0;
    o.allow_vendor = 0;
    int edits = 0;
    for (size_t m = 0; m < sizeof specs / sizeof *specs; m++) {
        sd_csr a;
        make(specs[m], &a);
        for (int env = 0; env < 2; env++) {
            char what[128];
            snprintf(what, sizeof what, "edits: %s%s", specs[m], env ? ", warp path off" : "");
            if (env)
                setenv("SPARSEDITTO_SG_WARP_BROW", "0", 1);
            /* the edits are the search winner's: no final rounds may swap it */
            setenv("SPARSEDITTO_SG_FINALISTS", "0", 1);
            sdi_config_reload();
            sd_kernel *k = compile(what, &a, NULL, &o, 0);
            unsetenv("SPARSEDITTO_SG_WARP_BROW");
            unsetenv("SPARSEDITTO_SG_FINALISTS");
            sdi_config_reload();
            if (k == NULL)
                continue;
            sdi_jvalue d;
            if (describe_parse(what, k, &d)) {
                const sdi_jvalue *plan = sdi_jget(&d, "plan");
                const sdi_jvalue *bins = sdi_jget(sdi_jget(plan, "lowering"), "bins");
                const sdi_jvalue *trials = sdi_jget(sdi_jget(&d, "search"), "trials");
                const char *config = sdi_jget_string(plan, "config", "");
                bool cta_rows = false, hash_rows = false;
                for (int i = 0; bins != NULL && i < bins->n; i++) {
                    const char *kind = sdi_jget_string(&bins->items[i], "kind", "");
                    if (sdi_jget_number(&bins->items[i], "rows", 0) <= 0)
                        continue;
                    cta_rows |= strcmp(kind, "chash") == 0 || strcmp(kind, "cdense") == 0 ||
                                strcmp(kind, "global") == 0;
                    hash_rows |= strcmp(kind, "ghash") == 0 || strcmp(kind, "chash") == 0;
                }
                const bool flip = edit_tried(trials, " wb=off");
                const bool load = edit_tried(trials, " load=100 ");
                edits += flip + load;
                SDT_CHECK(bins != NULL, "%s: the plan has no lowering bins", what);
                bool ok = true;
                for (int i = 0; trials != NULL && i < trials->n; i++) {
                    const sdi_jvalue *tr = &trials->items[i];
                    if (sdi_jget(tr, "edit_of") != NULL) {
                        ok = check_edit(what, trials, i) && ok;
                    } else if (sdi_jget_number(tr, "round", 0) == 3 &&
                               edit_only_mark(sdi_jget_string(tr, "config", ""))) {
                        SDT_CHECK(0, "%s: trial %d has an edit's mark but names no source", what, i);
                        ok = false;
                    }
                }
                if (winner_edit(trials, config) < 0) {
                    /* not an edit: the edits came from the winner's own plan and bins */
                    SDT_CHECK(!edit_only_mark(config),
                              "%s: the winner has an edit's mark but is no edit trial", what);
                    SDT_CHECK(flip == (cta_rows && !env), "%s: flip tried %d, CTA rows %d",
                              what, flip, cta_rows);
                    SDT_CHECK(load == hash_rows, "%s: load 100 tried %d, hash rows %d (%s)",
                              what, load, hash_rows, config);
                    ok = ok && !edit_only_mark(config) && flip == (cta_rows && !env) &&
                         load == hash_rows;
                }
                if (!ok)
                    dump_search(config, bins, trials);
            }
            sdi_jvalue_free(&d);
            run_check(what, k, &a, NULL, NULL);
            sd_kernel_destroy(k);
        }
        sd_csr_free(&a);
    }
    SDT_CHECK(edits > 0, "no winner's edit measured in four compiles");
}

/* The final rounds (src/tune/search_measure.c, sdi_search_finalists): on small products the winner and
 * the valid candidates timed in full within 1.3x of it (at most three) are timed again
 * side by side; the winner is the finalist with the lowest sum of its rounds' means, and
 * its last round's time is the one the search reports. */
static void test_finalists(void)
{
    static const char *specs[] = {"uniform:rows=2000,cols=2000,deg=8",
                                  "powerlaw:rows=3000,deg=6,alpha=2.0,max=300",
                                  "stencil2d:n=60"};
    sd_compile_options o = quick();
    o.use_cache = 0;
    o.allow_vendor = 0;
    int rounds = 0;
    for (size_t m = 0; m < sizeof specs / sizeof *specs; m++) {
        sd_csr a;
        make(specs[m], &a);
        char what[128];
        snprintf(what, sizeof what, "finalists: %s", specs[m]);
        sd_kernel *k = compile(what, &a, NULL, &o, 0);
        if (k == NULL) {
            sd_csr_free(&a);
            continue;
        }
        sdi_jvalue d;
        if (describe_parse(what, k, &d)) {
            const sdi_jvalue *search = sdi_jget(&d, "search");
            const sdi_jvalue *trials = sdi_jget(search, "trials");
            const double win_us = sdi_jget_number(sdi_jget(sdi_jget(search, "winner"), "time"), "mean_us", -1);
            const char *config = sdi_jget_string(sdi_jget(&d, "plan"), "config", "");
            int nfin = 0, wi = -1;
            double best_search = 1e300, win_sum = -1, min_sum = 1e300;
            for (int i = 0; trials != NULL && i < trials->n; i++) {
                const sdi_jvalue *tr = &trials->items[i];
                if (strcmp(sdi_jget_string(tr, "config", ""), config) == 0)
                    wi = i;
                const sdi_jvalue *rt = sdi_jget(tr, "retimed");
                if (rt == NULL)
                    continue;
                nfin++;
                const double sm = sdi_jget_number(rt, "search_mean_us", -1);
                const sdi_jvalue *rm = sdi_jget(rt, "round_mean_us");
                const double r0 = rm && rm->n == 2 ? rm->items[0].number : -1;
                const double r1 = rm && rm->n == 2 ? rm->items[1].number : -1;
                const double tm = sdi_jget_number(sdi_jget(tr, "time"), "mean_us", -2);
                SDT_CHECK(r0 > 0 && r1 > 0 && tm == r1, "%s: trial %d: rounds %.2f, %.2f, time %.2f",
                          what, i, r0, r1, tm);
                if (sm < best_search)
                    best_search = sm;
                if (r0 + r1 < min_sum)
                    min_sum = r0 + r1;
                if (strcmp(sdi_jget_string(tr, "config", ""), config) == 0)
                    win_sum = r0 + r1;
            }
            SDT_CHECK(nfin == 0 || nfin >= 2, "%s: %d finalist(s)", what, nfin);
            SDT_CHECK(nfin <= 3, "%s: %d finalists (at most 3)", what, nfin);
            if (nfin >= 2) {
                rounds++;
                SDT_CHECK(win_sum == min_sum, "%s: the winner's rounds %.2f, the lowest %.2f",
                          what, win_sum, min_sum);
                SDT_CHECK(wi >= 0 && win_us == sdi_jget_number(sdi_jget(&trials->items[wi], "time"), "mean_us", -3),
                          "%s: the search reports the winner's last round (%.2f us)", what, win_us);
            }
            /* every candidate timed in full within 1.3x of the search's best was a finalist
             * unless three were taken */
            for (int i = 0; trials != NULL && i < trials->n && nfin > 0 && nfin < 3; i++) {
                const sdi_jvalue *tr = &trials->items[i];
                if (sdi_jget(tr, "retimed") != NULL || strcmp(sdi_jget_string(tr, "status", ""), "success") != 0 ||
                    sdi_jget(tr, "brief") != NULL || sdi_jget(tr, "screened") != NULL)
                    continue;
                const double tm = sdi_jget_number(sdi_jget(tr, "time"), "mean_us", 1e300);
                SDT_CHECK(tm > 1.3 * best_search, "%s: trial %d (%.2f us) within 1.3x of %.2f us "
                          "but no finalist", what, i, tm, best_search);
            }
        }
        sdi_jvalue_free(&d);
        run_check(what, k, &a, NULL, NULL);
        sd_kernel_destroy(k);
        sd_csr_free(&a);
    }
    SDT_CHECK(rounds > 0, "no search of three small products had two finalists");
}

/* Linked units (SPARSEDITTO_SG_LINK=1: a dispatch kernel and one relocatable function per
 * segment variant, each declaring the dynamic shared memory and copying the arguments)
 * give exactly the C of the whole units, on products that reach every kind: tiny lists
 * and group tables (R-MAT), CTA tables with the warp per B row, the wide CTA stripe, and
 * global-memory stripes (rows of ~15,000 products over 100,000 columns). */
static void test_linked_products(void)
{
    static const char *specs[] = {
        "rmat:scale=12,ef=8",
        "uniform:rows=3000,cols=3000,deg=64",
        "bimodal:rows=36000,cols=36000,short=2,long=2500,frac=0.01",
        "bimodal:rows=100000,cols=100000,short=2,long=3000,frac=0.001",
    };
    sd_compile_options o = quick();
    o.use_cache = 0;
    setenv("SPARSEDITTO_SG_LINK", "1", 1);
    sdi_config_reload();
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        sd_csr a;
        make(specs[i], &a);
        char what[160];
        snprintf(what, sizeof what, "linked: %s", specs[i]);
        sd_kernel *k = compile(what, &a, NULL, &o, 0);
        if (k != NULL)
            run_check(what, k, &a, NULL, NULL);
        sd_kernel_destroy(k);
        sd_csr_free(&a);
    }
    unsetenv("SPARSEDITTO_SG_LINK");
    sdi_config_reload();
}

/* A single dense-ish row: one row of C reaches every column. */
static void test_long_row(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=4000,cols=4000,deg=2", sdt_seed, &a));
    /* Row 0 gets every column (a new CSR with row 0 full). */
    sd_csr b;
    int64_t n0 = a.rowptr[1];
    SDT_OK(sdi_csr_alloc(&b, a.rows, a.cols, a.nnz - n0 + a.cols));
    b.rowptr[0] = 0;
    for (int32_t j = 0; j < a.cols; j++)
        b.colind[j] = j;
    b.rowptr[1] = a.cols;
    for (int32_t i = 1; i < a.rows; i++) {
        int64_t len = a.rowptr[i + 1] - a.rowptr[i];
        memcpy(b.colind + b.rowptr[i], a.colind + a.rowptr[i], (size_t)len * 4);
        b.rowptr[i + 1] = b.rowptr[i] + len;
    }
    sdi_gen_values(&b, SDI_VALUES_SMALL_INT, sdt_seed + 2);
    SDT_OK(sd_csr_check(&b));
    sd_compile_options o = quick();
    sd_kernel *k = compile("long row 0 (4000 entries)", &b, NULL, &o, 0);
    if (k != NULL)
        run_check("long row", k, &b, NULL, NULL);
    sd_kernel_destroy(k);
    sd_csr_free(&b);
    sd_csr_free(&a);
}

static void test_general_ab_and_edges(void)
{
    sd_compile_options o = quick();
    sd_csr a, b;
    make("uniform:rows=1500,cols=900,deg=4", &a);
    make("powerlaw:rows=900,cols=1300,deg=6", &b);
    sd_kernel *k = compile("general A*B", &a, &b, &o, 0);
    if (k != NULL)
        run_check("general A*B", k, &a, &b, NULL);
    sd_kernel_destroy(k);
    /* b == a means A·Aᵀ for the rectangular A. */
    k = compile("b == a (rectangular: A*At)", &a, &a, &o, -1);
    if (k != NULL)
        run_check("b == a", k, &a, NULL, NULL);
    sd_kernel_destroy(k);
    sd_csr_free(&b);
    sd_csr_free(&a);

    /* Empty matrix: C is 40x40 with no entries. */
    SDT_OK(sdi_csr_alloc(&a, 40, 40, 0));
    memset(a.rowptr, 0, 41 * sizeof *a.rowptr);
    k = compile("empty 40x40", &a, NULL, &o, 0);
    if (k != NULL)
        run_check("empty", k, &a, NULL, NULL);
    sd_kernel_destroy(k);
    sd_csr_free(&a);

    /* nnz(C) = 0 with entries: A's columns hit only B's empty rows. A = columns 0..9 in
     * rows 0..9, B = rows 10.. only (A·B has no products). */
    SDT_OK(sdi_csr_alloc(&a, 20, 20, 10));
    SDT_OK(sdi_csr_alloc(&b, 20, 20, 10));
    for (int32_t i = 0; i <= 20; i++) {
        a.rowptr[i] = i < 10 ? i : 10;
        b.rowptr[i] = i <= 10 ? 0 : i - 10;
    }
    for (int32_t e = 0; e < 10; e++) {
        a.colind[e] = e;
        a.vals[e] = 1;
        b.colind[e] = e;
        b.vals[e] = 2;
    }
    k = compile("nnz(C) = 0", &a, &b, &o, 0);
    if (k != NULL)
        run_check("nnz(C) = 0", k, &a, &b, NULL);
    sd_kernel_destroy(k);
    sd_csr_free(&b);
    sd_csr_free(&a);
}

/* Second compile of the same pattern: a cache hit with the same C; then new values. */
static void test_cache_hit_and_update(void)
{
    sd_compile_options o = quick();
    sd_csr a, c1, c2;
    make("stencil2d:n=90", &a);
    sd_kernel *k = compile("stencil2d-90 (miss)", &a, NULL, &o, 0);
    if (k != NULL)
        run_check("miss", k, &a, NULL, &c1);
    sd_kernel_destroy(k);
    k = compile("stencil2d-90 (hit)", &a, NULL, &o, 1);
    if (k != NULL) {
        run_check("hit", k, &a, NULL, &c2);
        SDT_CHECK(c1.nnz == c2.nnz && memcmp(c1.colind, c2.colind, (size_t)c1.nnz * 4) == 0 &&
                      memcmp(c1.vals, c2.vals, (size_t)c1.nnz * 4) == 0,
                  "hit gives the same C");
        sd_csr_free(&c2);
        /* New values, same pattern. */
        sdi_gen_values(&a, SDI_VALUES_SMALL_INT, sdt_seed + 99);
        SDT_OK(sd_kernel_update_values(k, a.vals));
        run_check("after update_values", k, &a, NULL, NULL);
        float bad = NAN;
        float *v = malloc((size_t)a.nnz * sizeof *v);
        memcpy(v, a.vals, (size_t)a.nnz * sizeof *v);
        v[a.nnz / 2] = bad;
        SDT_STATUS(sd_kernel_update_values(k, v), SD_ERR_INVALID_ARG);
        free(v);
        /* SpMV entry points refuse a SpGEMM kernel. */
        SDT_STATUS(sd_spmv(k, (const float *)&bad, &bad, NULL), SD_ERR_INVALID_ARG);
    }
    sd_csr_free(&c1);
    sd_kernel_destroy(k);
    sd_csr_free(&a);

    /* General A·B: update_values takes A's values then B's. */
    sd_csr b;
    make("uniform:rows=800,cols=600,deg=3", &a);
    make("uniform:rows=600,cols=500,deg=3", &b);
    k = compile("A*B for update_values", &a, &b, &o, 0);
    if (k != NULL) {
        sdi_gen_values(&a, SDI_VALUES_SMALL_INT, sdt_seed + 5);
        sdi_gen_values(&b, SDI_VALUES_SMALL_INT, sdt_seed + 6);
        float *v = malloc((size_t)(a.nnz + b.nnz) * sizeof *v);
        memcpy(v, a.vals, (size_t)a.nnz * 4);
        memcpy(v + a.nnz, b.vals, (size_t)b.nnz * 4);
        SDT_OK(sd_kernel_update_values(k, v));
        free(v);
        run_check("A*B after update_values", k, &a, &b, NULL);
    }
    sd_kernel_destroy(k);
    sd_csr_free(&b);
    sd_csr_free(&a);
}

/* Deterministic mode: repeated products are bitwise identical; a product whose rows are
 * all ≤ 32 products may use our tiny plan, others fall to cuSPARSE (also reproducible). */
static void test_deterministic(void)
{
    sd_compile_options o = quick();
    o.deterministic = 1;
    o.use_cache = 0;
    static const char *specs[] = {"uniform:rows=5000,cols=5000,deg=3", "rmat:scale=11,ef=8"};
    for (size_t i = 0; i < 2; i++) {
        sd_csr a, c1, c2;
        SDT_OK(sdi_gen(specs[i], sdt_seed, &a));
        sdi_gen_values(&a, SDI_VALUES_UNIFORM, sdt_seed + 3);
        sd_kernel *k = NULL;
        sd_status s = sd_compile(g_ctx, &a, SD_OP_SPGEMM, 0, &o, &k);
        SDT_CHECK(s == SD_OK, "%s deterministic: %s", specs[i], sd_last_error());
        if (s == SD_OK) {
            char *json = malloc(1 << 22);
            SDT_OK(sd_kernel_describe(k, json, 1 << 22));
            SDT_CHECK(strstr(json, "\"deterministic\":true") != NULL, "%s: plan %.200s", specs[i], json);
            free(json);
            sd_device_csr d1, d2;
            SDT_OK(sd_spgemm(k, &d1, g_ctx->stream));
            SDT_OK(sd_spgemm(k, &d2, g_ctx->stream));
            SDT_OK(sdi_stream_sync(g_ctx, "det", NULL));
            if (download(&d1, &c1) && download(&d2, &c2)) {
                SDT_CHECK(c1.nnz == c2.nnz && memcmp(c1.vals, c2.vals, (size_t)c1.nnz * 4) == 0,
                          "%s: repeated products differ", specs[i]);
            }
            sd_csr_free(&c1);
            sd_csr_free(&c2);
            sd_device_csr_free(&d1);
            sd_device_csr_free(&d2);
        }
        sd_kernel_destroy(k);
        sd_csr_free(&a);
    }
}

/* sd_device_csr_free straight after sd_spgemm, with work still queued on the caller's
 * (non-blocking) stream that writes C: the free must wait for it (the H200 faults when a
 * 4.6 GB C is freed under its pending copies). A host function holds the
 * stream for 200 ms, then a memset writes C; after the free the stream must be idle and
 * the device error-free, and the next product must still be right. */
static void CUDART_CB hold_stream(void *arg)
{
    (void)arg;
    usleep(200 * 1000);
}

static void test_free_waits(void)
{
    sd_csr a;
    make("banded:n=20000,bw=4", &a);
    sd_compile_options o = quick();
    sd_kernel *k = compile("free after queued work", &a, NULL, &o, -1);
    if (k != NULL) {
        cudaStream_t st = g_ctx->stream;
        sd_device_csr c;
        SDT_OK(sd_spgemm(k, &c, st));
        SDT_CHECK(cudaLaunchHostFunc(st, hold_stream, NULL) == cudaSuccess, "cudaLaunchHostFunc");
        SDT_CHECK(cudaMemsetAsync(c.vals, 0, (size_t)c.nnz * 4, st) == cudaSuccess, "memset C");
        sd_device_csr_free(&c);
        cudaError_t q = cudaStreamQuery(st);
        SDT_CHECK(q == cudaSuccess, "the stream still had work after sd_device_csr_free: %s",
                  cudaGetErrorString(q));
        SDT_CHECK(c.rowptr == NULL && c.colind == NULL && c.vals == NULL && c.nnz == 0,
                  "c not zeroed");
        SDT_OK(sdi_stream_sync(g_ctx, "after the free", NULL));
        run_check("next product after the free", k, &a, NULL, NULL);
    }
    sd_kernel_destroy(k);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_compile_spgemm");
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/sd-test-compile-spgemm-%ld", (long)getpid());
    int rc = 0;
    if (!sdt_context_open(dir, &g_ctx, &rc))
        return rc;
    SDT_RUN(test_products);
    SDT_RUN(test_winner_edits);
    SDT_RUN(test_finalists);
    SDT_RUN(test_linked_products);
    SDT_RUN(test_long_row);
    SDT_RUN(test_general_ab_and_edges);
    SDT_RUN(test_cache_hit_and_update);
    SDT_RUN(test_deterministic);
    SDT_RUN(test_free_waits);
    sdt_context_close(g_ctx, dir);
    return sdt_finish();
}
