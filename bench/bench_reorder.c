/* bench/bench_reorder.c: graph reordering as a representation choice. For every matrix
 * of a set and each method (rabbit, rcm, degree): the cost of computing and applying the
 * permutation, PR_2 before and after (ParamSpMM's padding ratio with V = 2), a vertical
 * pairing ratio that does depend on the order (slots of 2×1 blocks of rows 2i, 2i+1 over
 * nnz), bandwidth and mean |i − j|; on a GPU, the best SpMM time of our templates (small
 * sweep, validated) and of cuSPARSE before and after, at each K of --k.
 *
 *   bench_reorder [--out DIR] [--set real|paper60|quick|LIST] [--k 32] [--max-nnz N]
 *                 [--time-limit S] [--level 0|1] [--dir MATRICES_DIR] [--no-gpu]
 *
 * Defaults: --set real --k 32 --max-nnz 3e6 --time-limit 200 --level 1. Writes
 * DIR/bench_reorder.json and DIR/bench_reorder.md (default DIR bench/results).
 * Exit 0 when every permutation checked out and every timed candidate validated. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cuda_runtime_api.h>

#include "formats/reorder.h"
#include "formats/spmm_formats.h"
#include "gen/gen.h"
#include "plan/families/spmm_shared.h"
#include "runtime/executable.h"
#include "runtime/runtime.h"
#include "plan/spmm.h"
#include "vendor/baseline.h"

/* ------------------------------------------------------------------ one configuration
 * Lowered through its family, instantiated as the runtime's executable. */
static sd_status lower_cfg(const sd_csr *a, const sdi_spmm_config *c, sdi_lowered *l)
{
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    return sdi_spmm_lower_config(a, &st, c, l);
}

#define NM (SDI_REORDER_NMETHODS + 1) /* original + each method */
#define MAX_K 4

typedef struct {
    double order_s, apply_s;
    double pr2, pr2_rows, mean_dist;
    long long bandwidth;
    double ours_us[MAX_K], cusparse_us[MAX_K];
    char ours_plan[MAX_K][160];
    int ok;
} version_t;

typedef struct {
    char name[128];
    int32_t rows, cols;
    int64_t nnz;
    const char *status;
    char detail[200];
    version_t v[NM];
} row_t;

static int nfail;

static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (c == NULL)
            break;
        p = c + 1;
    }
    return false;
}

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

/* Vertical pairing: rows 2i and 2i+1 stored as 2×1 blocks over the union of their
 * columns; slots / nnz (1 when paired rows share all columns, up to 2). */
static double pair_ratio(const sd_csr *a)
{
    if (a->nnz == 0)
        return 0;
    int64_t slots = 0;
    for (int32_t i = 0; i < a->rows; i += 2) {
        int64_t p = a->rowptr[i], pe = a->rowptr[i + 1];
        int64_t q = i + 1 < a->rows ? a->rowptr[i + 1] : pe;
        int64_t qe = i + 1 < a->rows ? a->rowptr[i + 2] : pe;
        int64_t u = 0;
        while (p < pe || q < qe) {
            if (q >= qe || (p < pe && a->colind[p] < a->colind[q]))
                p++;
            else if (p >= pe || a->colind[q] < a->colind[p])
                q++;
            else {
                p++;
                q++;
            }
            u++;
        }
        slots += 2 * u;
    }
    return (double)slots / (double)a->nnz;
}

static void band(const sd_csr *a, long long *bw, double *mean)
{
    long long b = 0;
    double s = 0;
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            long long d = llabs((long long)a->colind[k] - i);
            b = d > b ? d : b;
            s += (double)d;
        }
    *bw = b;
    *mean = a->nnz ? s / (double)a->nnz : 0;
}

/* Best validated time of our candidates (level sweep) and of cuSPARSE on a at K. */
static void time_spmm(sd_context *ctx, const sd_csr *a, int k, int level, double *ours,
                      char *plan, size_t plan_cap, double *cus)
{
    *ours = *cus = INFINITY;
    plan[0] = '\0';
    size_t nb = (size_t)a->cols * k, nc = (size_t)a->rows * k;
    float *b = malloc((nb ? nb : 1) * sizeof *b);
    sdi_baseline *bl = calloc(1, sizeof *bl);
    float *d_b = NULL, *d_c = NULL;
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    sdi_spmm_config *c = NULL;
    int n = 0;
    if (b == NULL || bl == NULL)
        goto done;
    sdi_gen_dense(b, (int64_t)nb, SDI_VALUES_UNIFORM, 77);
    sdi_baseline_options bo = {.k = k, .aat = -1};
    if (sdi_cusparse_baseline(ctx, a, SD_OP_SPMM, b, &bo, bl) == SD_OK && bl->best >= 0)
        *cus = bl->v[bl->best].timing.mean_us;
    sd_status s = sdi_reference_dense(a, SD_OP_SPMM, b, k, 0, &ref);
    if (s == SD_OK)
        s = sdi_device_upload(ctx, (void **)&d_b, b, nb * 4, "B");
    if (s == SD_OK)
        s = sdi_device_malloc(ctx, (void **)&d_c, nc * 4, "C");
    if (s == SD_OK)
        s = sdi_spmm_enumerate(a, k, 0, level, 0, &c, &n);
    for (int i = 0; i < n && s == SD_OK; i++) {
        char desc[160];
        sdi_spmm_config_describe(&c[i], desc, sizeof desc);
        sdi_lowered l;
        sdi_executable ld;
        memset(&ld, 0, sizeof ld);
        sd_status e = lower_cfg(a, &c[i], &l);
        if (e == SD_ERR_UNSUPPORTED) {
            sdi_error_clear();
            continue;
        }
        if (e == SD_OK)
            e = sdi_exe_create_program(ctx, &l, true, &ld);
        if (e == SD_OK && nc)
            e = sdi_cuda_status(ctx, cudaMemsetAsync(d_c, 0xff, nc * 4, ctx->stream), "poison",
                                NULL);
        sdi_validation val;
        memset(&val, 0, sizeof val);
        sdi_timing tm;
        if (e == SD_OK)
            e = sdi_exe_measure(ctx, &ld, d_b, d_c, &ref, &val, desc, &tm);
        sdi_exe_free(&ld);
        sdi_lowered_free(&l);
        if (e != SD_OK) {
            nfail++;
            fprintf(stderr, "  FAILED %s K=%d: %s\n", desc, k,
                    val.reason[0] ? val.reason : sd_last_error());
            if (ctx->broken)
                break;
            continue;
        }
        if (tm.mean_us < *ours) {
            *ours = tm.mean_us;
            snprintf(plan, plan_cap, "%s", desc);
        }
    }
done:
    sdi_free(c);
    free(b);
    free(bl);
    sdi_device_free(d_b);
    sdi_device_free(d_c);
    sdi_reference_free(&ref);
}

int main(int argc, char **argv)
{
    const char *out_dir = "bench/results", *set = "real", *ks_s = "32", *dir = SD_MATRICES_DIR;
    double max_nnz = 3e6, time_limit = 200;
    int level = 1, use_gpu = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v != NULL && (i++, 1))
        if (OPT("--out")) out_dir = v;
        else if (OPT("--set")) set = v;
        else if (OPT("--k")) ks_s = v;
        else if (OPT("--max-nnz")) max_nnz = atof(v);
        else if (OPT("--time-limit")) time_limit = atof(v);
        else if (OPT("--level")) level = atoi(v);
        else if (OPT("--dir")) dir = v;
        else if (strcmp(a, "--no-gpu") == 0) use_gpu = 0;
        else {
            fprintf(stderr, "usage: bench_reorder [--out DIR] [--set real|paper60|quick|LIST] "
                            "[--k LIST] [--max-nnz N] [--time-limit S] [--level 0|1] "
                            "[--dir DIR] [--no-gpu]\n");
            return 2;
        }
#undef OPT
    }
    int ks[MAX_K], nk = 0;
    for (const char *p = ks_s; *p && nk < MAX_K;) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p || k < 1 || k > 65536)
            return 2;
        ks[nk++] = (int)k;
        p = *end == ',' ? end + 1 : end;
    }
    sd_context *ctx = NULL;
    if (use_gpu && sd_context_create(NULL, &ctx) != SD_OK) {
        fprintf(stderr, "bench_reorder: no GPU (%s): costs and ratios only\n", sd_last_error());
        ctx = NULL;
    }
    /* The matrices. */
    char names[1024][128], specs[1024][512];
    int gen[1024], nmat = 0;
    char path[1200];
    if (in_list(set, "quick")) {
        static const char *g[] = {"knn:n=100000,k=8", "rmat:scale=16,ef=16",
                                  "powerlaw:rows=100000,deg=8", "stencil2d:n=300"};
        for (int i = 0; i < 4; i++, nmat++) {
            snprintf(names[nmat], 128, "%s", g[i]);
            snprintf(specs[nmat], 512, "%s", g[i]);
            gen[nmat] = 1;
        }
    }
    if (in_list(set, "paper60")) {
        sdi_twin_target *t = NULL;
        int nt = 0;
        snprintf(path, sizeof path, "%.600s/paper60.tsv", dir);
        if (sdi_twin_read_table(path, &t, &nt) == SD_OK) {
            for (int i = 0; i < nt && nmat < 1024; i++) {
                if ((double)t[i].nnz > max_nnz)
                    continue;
                snprintf(names[nmat], 128, "%.100s", t[i].name);
                snprintf(specs[nmat], 512, "twin:name=%.100s,file=%.380s", t[i].name, path);
                gen[nmat++] = 1;
            }
            sdi_free(t);
        }
    }
    if (in_list(set, "real")) {
        char d[700];
        snprintf(d, sizeof d, "%.600s/suitesparse", dir);
        DIR *dd = opendir(d);
        if (dd) {
            char found[512][128];
            int nf = 0;
            struct dirent *e;
            while ((e = readdir(dd)) != NULL && nf < 512) {
                size_t l = strlen(e->d_name);
                if (l > 7 && l - 7 < 128 && strcmp(e->d_name + l - 7, ".mtx.gz") == 0) {
                    memcpy(found[nf], e->d_name, l - 7);
                    found[nf++][l - 7] = '\0';
                }
            }
            closedir(dd);
            qsort(found, (size_t)nf, sizeof found[0], cmp_str);
            for (int i = 0; i < nf && nmat < 1024; i++) {
                snprintf(names[nmat], 128, "%.127s", found[i]);
                snprintf(specs[nmat], 512, "%.300s/%.127s.mtx.gz", d, found[i]);
                gen[nmat++] = 0;
            }
        }
    }
    row_t *rows = calloc((size_t)(nmat ? nmat : 1), sizeof *rows);
    if (rows == NULL)
        return 1;
    double t0 = sdi_now();
    int nrows = 0;
    for (int m = 0; m < nmat; m++) {
        row_t *r = &rows[nrows++];
        snprintf(r->name, sizeof r->name, "%s", names[m]);
        if (time_limit > 0 && sdi_now() - t0 > time_limit) {
            r->status = "not run";
            snprintf(r->detail, sizeof r->detail, "time limit");
            continue;
        }
        sd_csr a;
        sd_status s = gen[m] ? sdi_gen(specs[m], 1, &a) : sd_csr_read(specs[m], &a);
        if (s != SD_OK) {
            r->status = "error";
            snprintf(r->detail, sizeof r->detail, "%.190s", sd_last_error());
            continue;
        }
        if (gen[m])
            sdi_gen_values(&a, SDI_VALUES_UNIFORM, 5);
        r->rows = a.rows;
        r->cols = a.cols;
        r->nnz = a.nnz;
        if ((double)a.nnz > max_nnz) {
            r->status = "skipped";
            snprintf(r->detail, sizeof r->detail, "nnz beyond --max-nnz");
            sd_csr_free(&a);
            continue;
        }
        r->status = "ok";
        for (int v = 0; v < NM; v++) {
            version_t *x = &r->v[v];
            sd_csr p;
            memset(&p, 0, sizeof p);
            const sd_csr *cur = &a;
            if (v > 0) {
                int32_t *pr = NULL, *pc = NULL;
                double s0 = sdi_now();
                s = sdi_reorder(&a, v - 1, &pr, &pc);
                x->order_s = sdi_now() - s0;
                s0 = sdi_now();
                if (s == SD_OK)
                    s = sdi_csr_permute(&a, pr, pc, &p);
                x->apply_s = sdi_now() - s0;
                sdi_free(pr);
                sdi_free(pc);
                if (s != SD_OK || sd_csr_check(&p) != SD_OK || p.nnz != a.nnz) {
                    nfail++;
                    fprintf(stderr, "  %s %s: %s\n", r->name, sdi_reorder_method_name(v - 1),
                            sd_last_error());
                    sd_csr_free(&p);
                    continue;
                }
                cur = &p;
            }
            x->ok = 1;
            x->pr2 = sdi_pcsr_padding_ratio(cur, 2);
            x->pr2_rows = pair_ratio(cur);
            band(cur, &x->bandwidth, &x->mean_dist);
            for (int q = 0; q < nk; q++) {
                x->ours_us[q] = x->cusparse_us[q] = NAN;
                if (ctx != NULL && !ctx->broken)
                    time_spmm(ctx, cur, ks[q], level, &x->ours_us[q], x->ours_plan[q],
                              sizeof x->ours_plan[q], &x->cusparse_us[q]);
            }
            sd_csr_free(&p);
        }
        fprintf(stderr, "  %-28s nnz %-9lld", r->name, (long long)a.nnz);
        for (int v = 0; v < NM; v++)
            fprintf(stderr, " | %s %.3fs PR2 %.3f pairs %.3f K%d %.1f/%.1f us",
                    v ? sdi_reorder_method_name(v - 1) : "orig", r->v[v].order_s, r->v[v].pr2,
                    r->v[v].pr2_rows, ks[0], r->v[v].ours_us[0], r->v[v].cusparse_us[0]);
        fprintf(stderr, "\n");
        sd_csr_free(&a);
    }
    double total = sdi_now() - t0;
    /* Outputs. */
    mkdir(out_dir, 0755);
    sdi_json j;
    sdi_json_init(&j, 1);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "device");
    sdi_json_string(&j, ctx ? ctx->props.name : "none");
    sdi_json_key(&j, "seconds");
    sdi_json_number(&j, total);
    sdi_json_key(&j, "k");
    sdi_json_begin_array(&j);
    for (int q = 0; q < nk; q++)
        sdi_json_int(&j, ks[q]);
    sdi_json_end_array(&j);
    sdi_json_key(&j, "matrices");
    sdi_json_begin_array(&j);
    for (int m = 0; m < nrows; m++) {
        row_t *r = &rows[m];
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "matrix");
        sdi_json_string(&j, r->name);
        sdi_json_key(&j, "nnz");
        sdi_json_int(&j, r->nnz);
        sdi_json_key(&j, "status");
        sdi_json_string(&j, r->status);
        for (int v = 0; v < NM && strcmp(r->status, "ok") == 0; v++) {
            version_t *x = &r->v[v];
            sdi_json_key(&j, v ? sdi_reorder_method_name(v - 1) : "original");
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "ok");
            sdi_json_bool(&j, x->ok != 0);
            sdi_json_key(&j, "order_seconds");
            sdi_json_number(&j, x->order_s);
            sdi_json_key(&j, "apply_seconds");
            sdi_json_number(&j, x->apply_s);
            sdi_json_key(&j, "pr2");
            sdi_json_number(&j, x->pr2);
            sdi_json_key(&j, "pair_ratio");
            sdi_json_number(&j, x->pr2_rows);
            sdi_json_key(&j, "bandwidth");
            sdi_json_int(&j, x->bandwidth);
            sdi_json_key(&j, "mean_distance");
            sdi_json_number(&j, x->mean_dist);
            sdi_json_key(&j, "spmm");
            sdi_json_begin_array(&j);
            for (int q = 0; q < nk; q++) {
                sdi_json_begin_object(&j);
                sdi_json_key(&j, "k");
                sdi_json_int(&j, ks[q]);
                sdi_json_key(&j, "ours_us");
                sdi_json_number(&j, x->ours_us[q]);
                sdi_json_key(&j, "plan");
                sdi_json_string(&j, x->ours_plan[q]);
                sdi_json_key(&j, "cusparse_us");
                sdi_json_number(&j, x->cusparse_us[q]);
                sdi_json_end_object(&j);
            }
            sdi_json_end_array(&j);
            sdi_json_end_object(&j);
        }
        sdi_json_end_object(&j);
    }
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    char fpath[1200];
    if (sdi_json_finish(&j) == SD_OK) {
        snprintf(fpath, sizeof fpath, "%.1000s/bench_reorder.json", out_dir);
        FILE *f = fopen(fpath, "w");
        if (f) {
            fputs(j.buf, f);
            fclose(f);
        }
    }
    sdi_json_free(&j);
    snprintf(fpath, sizeof fpath, "%.1000s/bench_reorder.md", out_dir);
    FILE *md = fopen(fpath, "w");
    if (md) {
        fprintf(md, "# Graph reordering: cost, PR_2, locality and SpMM time\n\n"
                    "Device: %s; K = %d; %.0f s. PR_2 = ParamSpMM padding with V = 2 (slots / "
                    "nnz): it depends on row lengths only, so a permutation cannot change it; "
                    "'pairs' = slots of 2×1 blocks of consecutive rows / nnz, which it can. "
                    "Times: best validated plan of ours (sweep) / best cuSPARSE, in µs.\n\n"
                    "| matrix | nnz | method | order s | PR_2 | pairs | bandwidth | mean "
                    "\\|i−j\\| | ours µs | cuSPARSE µs | ours speed-up vs original |\n"
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
                ctx ? ctx->props.name : "none (no timings)", ks[0], total);
        double lsum[NM] = {0};
        int lcount[NM] = {0};
        for (int m = 0; m < nrows; m++) {
            row_t *r = &rows[m];
            if (strcmp(r->status, "ok") != 0)
                continue;
            for (int v = 0; v < NM; v++) {
                version_t *x = &r->v[v];
                double sp = x->ours_us[0] > 0 ? r->v[0].ours_us[0] / x->ours_us[0] : NAN;
                if (isfinite(sp) && sp > 0) {
                    lsum[v] += log(sp);
                    lcount[v]++;
                }
                fprintf(md, "| %s | %lld | %s | %.3f | %.3f | %.3f | %lld | %.1f | %.2f | %.2f | "
                            "%.2f× |\n",
                        r->name, (long long)r->nnz, v ? sdi_reorder_method_name(v - 1) : "original",
                        x->order_s, x->pr2, x->pr2_rows, x->bandwidth, x->mean_dist,
                        x->ours_us[0], x->cusparse_us[0], sp);
            }
        }
        fprintf(md, "\nGeometric mean of our best SpMM time, original / reordered (K = %d):", ks[0]);
        for (int v = 1; v < NM; v++)
            fprintf(md, " %s %.3f× (%d matrices);", sdi_reorder_method_name(v - 1),
                    lcount[v] ? exp(lsum[v] / lcount[v]) : 0.0, lcount[v]);
        fprintf(md, "\n");
        fclose(md);
    }
    fprintf(stderr, "wrote %s/bench_reorder.{json,md} (%d matrices, %.0f s, %d failures)\n",
            out_dir, nrows, total, nfail);
    free(rows);
    if (ctx)
        sd_context_destroy(ctx);
    return nfail ? 1 : 0;
}
