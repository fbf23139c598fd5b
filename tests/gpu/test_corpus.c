/* tests/gpu/test_corpus.c: the corpus builder on a GPU: three small generated matrices,
 * spmv first, then spmv + spmm8 (only the spmm tasks are new), then the same again (nothing
 * new, the file unchanged), then after a torn last line (dropped, nothing new); a size
 * band (--min-nnz / --max-nnz) measures only the matrices inside it. Every
 * record must parse as a corpus task with a cuSPARSE baseline and validated template
 * times; spmm records carry ParamSpMM features and PCSR configurations. Skipped (exit
 * 77) without a device. */
#include <unistd.h>

#include "core/json_parse.h"
#include "corpus/corpus.h"
#include "model/forest.h"
#include "sdt.h"
#include "corpus/corpus_build.h"

static sd_context *g_ctx;
static char dir[256];

static const char *list_text = "stencil2d:n=24\n"
                               "powerlaw:rows=3000,deg=6,alpha=2.0,max=400\n"
                               "uniform:rows=2000,cols=1500,deg=5\n";

static sd_status build_band(const char *list, const char *ops_text, const char *out,
                            double min_nnz, double max_nnz, sdi_corpus_build_summary *sum)
{
    sdi_corpus_entry *e = NULL;
    int n = 0;
    sdi_corpus_opk ops[SDI_CORPUS_MAX_OPS];
    int nops = 0;
    sd_status s = sdi_corpus_list_parse(list, strlen(list), ".", &e, &n);
    if (s == SD_OK)
        s = sdi_corpus_ops_parse(ops_text, ops, &nops);
    if (s != SD_OK) {
        sdi_free(e);
        return s;
    }
    sdi_corpus_build_opts o;
    memset(&o, 0, sizeof o);
    o.out_path = out;
    o.entries = e;
    o.nentries = n;
    o.ops = ops;
    o.nops = nops;
    o.sweep = 1;
    o.max_products = 1e9;
    o.min_nnz = min_nnz;
    o.max_nnz = max_nnz;
    o.log = stderr;
    s = sdi_corpus_build(g_ctx, &o, sum);
    sdi_free(e);
    return s;
}

static sd_status build(const char *ops_text, const char *out, sdi_corpus_build_summary *sum)
{
    return build_band(list_text, ops_text, out, 0, 0, sum);
}

static char *slurp(const char *path)
{
    char *b = NULL;
    size_t n = 0;
    return sdi_model_read_file(path, &b, &n) == SD_OK ? b : NULL;
}

static void check_records(const char *path, int want_tasks)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_read(path, &c));
    SDT_CHECK(c.ntasks == want_tasks, "%d tasks in the corpus, expected %d", c.ntasks, want_tasks);
    for (int t = 0; t < c.ntasks; t++) {
        const sdi_corpus_task *k = &c.tasks[t];
        int nv = 0, measured = 0;
        sdi_vocabulary(k->op, &nv);
        for (int s = 0; s < nv; s++)
            measured += k->us[s] > 0;
        SDT_CHECK(k->baseline_us > 0, "task %d: baseline %g", t, k->baseline_us);
        SDT_CHECK(k->us[0] > 0, "task %d (%s): csr not measured", t, c.records[k->record].matrix);
        /* SpMM on random patterns: the blocked labels (bsr, bell) are refused for their
         * padding, so csr and coo are what every matrix has. */
        int need = k->op == SD_OP_SPMM ? 2 : 3;
        SDT_CHECK(measured >= need, "task %d (%s %s): only %d templates measured", t,
                  c.records[k->record].matrix, sdi_op_name(k->op), measured);
        SDT_CHECK(k->op != SD_OP_SPMM || k->us[1] > 0, "task %d (%s): coo not measured", t,
                  c.records[k->record].matrix);
        SDT_CHECK(k->op != SD_OP_SPMM || k->k == 8, "task %d: k %d", t, k->k);
        SDT_CHECK(c.records[k->record].features[0] > 0, "task %d: rows feature 0", t);
    }
    sdi_corpus_free(&c);
    /* Raw lines: details per label and the ParamSpMM data of spmm lines. */
    char *text = slurp(path);
    int spmm_with_pcsr = 0;
    for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        sdi_jvalue v;
        SDT_OK(sdi_json_parse(line, -1, &v));
        SDT_CHECK(sdi_jget(&v, "error") == NULL, "error line: %s", line);
        const sdi_jvalue *d = sdi_jget(&v, "templates_detail");
        SDT_CHECK(d != NULL && d->n > 0, "no templates_detail");
        const sdi_jvalue *p = sdi_jget(&v, "pcsr");
        if (p != NULL) {
            const sdi_jvalue *cf = sdi_jget(p, "configs"), *pf = sdi_jget(p, "features");
            spmm_with_pcsr += cf != NULL && cf->n > 0 && pf != NULL && pf->n == SDI_PSPMM_NFEAT;
        }
        sdi_jvalue_free(&v);
    }
    sdi_free(text);
    SDT_CHECK(want_tasks == 3 || spmm_with_pcsr == 3, "%d spmm lines with PCSR data", spmm_with_pcsr);
}

static void test_build_and_resume(void)
{
    char out[320];
    snprintf(out, sizeof out, "%s/corpus.jsonl", dir);
    sdi_corpus_build_summary sum;
    double t0 = sdi_now();
    SDT_OK(build("spmv", out, &sum));
    SDT_CHECK(sum.measured == 3 && sum.errors == 0 && sum.already_done == 0, "run 1: %d measured, %d errors",
              sum.measured, sum.errors);
    check_records(out, 3);
    SDT_OK(build("spmv,spmm8", out, &sum));
    SDT_CHECK(sum.measured == 3 && sum.already_done == 3 && sum.errors == 0,
              "run 2: %d measured, %d already done, %d errors", sum.measured, sum.already_done, sum.errors);
    check_records(out, 6);
    char *before = slurp(out);
    SDT_OK(build("spmv,spmm8", out, &sum));
    SDT_CHECK(sum.measured == 0 && sum.already_done == 6, "run 3: %d measured, %d already done",
              sum.measured, sum.already_done);
    char *after = slurp(out);
    SDT_CHECK(before != NULL && after != NULL && strcmp(before, after) == 0, "run 3 changed the file");
    sdi_free(after);
    /* A crash mid-write leaves a torn line: the next run drops it and adds nothing. */
    FILE *f = fopen(out, "ab");
    fputs("{\"matrix\":\"stencil2d:n=24\",\"op\":\"spmm\",\"k\":8,\"feat", f);
    fclose(f);
    SDT_OK(build("spmv,spmm8", out, &sum));
    SDT_CHECK(sum.measured == 0 && sum.already_done == 6, "run 4: %d measured", sum.measured);
    after = slurp(out);
    SDT_CHECK(after != NULL && strcmp(before, after) == 0, "the torn line was not dropped");
    sdi_free(after);
    sdi_free(before);
    printf("  four runs in %.1f s\n", sdi_now() - t0);
}

/* A size band: stencil2d:n=24 (about 2,800 nonzeros) under it, the power-law matrix (14,956)
 * over it, the uniform one (10,000) inside; first by the loaded sizes (no hints),
 * then by nnz= hints, which decide without loading. */
static void test_size_band(void)
{
    char out[320];
    snprintf(out, sizeof out, "%s/band.jsonl", dir);
    sdi_corpus_build_summary sum;
    SDT_OK(build_band(list_text, "spmv", out, 5000, 12000, &sum));
    SDT_CHECK(sum.measured == 1 && sum.too_small == 1 && sum.too_big == 1,
              "band by size: %d measured, %d under, %d over", sum.measured, sum.too_small, sum.too_big);
    sdi_corpus c;
    SDT_OK(sdi_corpus_read(out, &c));
    SDT_CHECK(c.nrecords == 1 && strncmp(c.records[0].matrix, "uniform:", 8) == 0,
              "%d records, first %s", c.nrecords, c.nrecords > 0 ? c.records[0].matrix : "-");
    sdi_corpus_free(&c);
    static const char *hinted = "stencil2d:n=24 nnz=2784\n"
                                "stencil2d:n=30 nnz=4380\n"
                                "uniform:rows=2000,cols=1500,deg=5 nnz=10000\n";
    SDT_OK(build_band(hinted, "spmv", out, 5000, 15000, &sum));
    SDT_CHECK(sum.measured == 0 && sum.already_done == 1 && sum.too_small == 2,
              "band by hints: %d measured, %d already done, %d under", sum.measured,
              sum.already_done, sum.too_small);
}

int main(void)
{
    sdt_init("test_corpus (gpu)");
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        fprintf(stderr, "context: %s\n", sd_last_error());
        return 1;
    }
    snprintf(dir, sizeof dir, "/tmp/sd-test-corpus-gpu-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    SDT_RUN(test_build_and_resume);
    SDT_RUN(test_size_band);
    sd_context_destroy(g_ctx);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return sdt_finish();
}
