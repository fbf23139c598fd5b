/* tests/cpu/test_spmv_compile.c: every SpMV template variant compiles with NVRTC for
 * sm_90 (no GPU needed): the wide θ_H sweep of every family over matrices of different
 * shapes, plus explicit variants covering every macro branch (lane widths, vector loads,
 * 32-bit row pointers, 16-bit column deltas, cache hints, sorted SELL, ELL, every BSR
 * block size, the x window of DIA, the single-CTA merge path). Distinct sources are
 * compiled once each, in parallel. */
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "plan/families/spmv_shared.h"
#include "runtime/jit.h"
#include "sdt.h"

#define MAXV 512

typedef struct {
    char key[512]; /* template + macros: what the cubin depends on */
    char label[160];
    sdi_lowered src;
} variant;

static variant g_v[MAXV];
static int g_n;
static sdi_gpu_props g_h200;

static const sdi_family *spmv_family(int id)
{
    return sdi_family_at(sdi_family_of(SD_OP_SPMV, id));
}

/* The task of a matrix with its statistics on an H200. */
static sdi_task task_of(const sd_csr *a, const sdi_spmv_stats *st)
{
    sdi_task t = {.op = SD_OP_SPMV, .k = 1, .a = a, .gpu = &g_h200, .spmv = st};
    return t;
}

/* The family's sweep at level (the search's per-family call). */
static void sweep_of(const sdi_task *t, int id, int level, sdi_plan_list *l)
{
    SDT_OK(spmv_family(id)->sweep(t, level, l));
}

static void add_config(const sdi_spmv_config *c)
{
    if (g_n >= MAXV)
        return;
    variant *v = &g_v[g_n];
    memset(v, 0, sizeof *v);
    sdi_plan p;
    sdi_spmv_plan_set(&p, c);
    const sdi_task t = {.op = SD_OP_SPMV, .k = 1, .gpu = &g_h200};
    sd_status s = spmv_family(c->family)->source(&t, &p, &v->src);
    SDT_CHECK(s == SD_OK, "source of family %d: %s", c->family, sd_last_error());
    if (s != SD_OK)
        return;
    /* The key is built in a local buffer: its sources live in g_v too. */
    char key[sizeof v->key];
    size_t o = (size_t)snprintf(key, sizeof key, "%s", v->src.template_name);
    for (int i = 0; i < v->src.nmacros && o < sizeof key; i++)
        o += (size_t)snprintf(key + o, sizeof key - o, " %s=%s", v->src.macro_name[i],
                              v->src.macro_value[i]);
    memcpy(v->key, key, sizeof key);
    for (int i = 0; i < g_n; i++)
        if (strcmp(g_v[i].key, v->key) == 0) {
            sdi_lowered_free(&v->src);
            return;
        }
    sdi_spmv_config_describe(c, v->label, sizeof v->label);
    g_n++;
}

static void add_sweeps(void)
{
    static const char *const specs[] = {
        "stencil2d:n=40", "powerlaw:rows=3000,deg=20", "uniform:rows=2000,deg=3",
        "blockdiag:n=512,b=16", "bimodal:rows=2000,short=2,long=600,frac=0.02",
        "banded:n=2000,bw=40",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        sd_csr a;
        if (sdi_gen(specs[i], 1, &a) != SD_OK) {
            SDT_CHECK(0, "generator %s: %s", specs[i], sd_last_error());
            continue;
        }
        sdi_spmv_stats st;
        SDT_OK(sdi_spmv_stats_compute(&a, &st));
        const sdi_task t = task_of(&a, &st);
        sdi_plan_list l = {0};
        for (int f = 0; f < SDI_SPMV_NFAMILIES; f++)
            sweep_of(&t, f, 2, &l);
        for (int k = 0; k < l.n; k++)
            add_config(&l.v[k].p.spmv);
        sdi_plan_list_free(&l);
        sd_csr_free(&a);
    }
}

static void add_explicit(void)
{
    sdi_spmv_config c;
    for (int vw = 1; vw <= 32; vw *= 2)
        for (int vec = 1; vec <= 4; vec += 3) {
            memset(&c, 0, sizeof c);
            c.family = SDI_SPMV_CSR_VEC;
            c.block = 256;
            c.vw = vw;
            c.vec = vec;
            c.unroll = 2;
            c.rp32 = vw % 2;
            add_config(&c);
            c.colc = 1;
            c.colc_shift = vw >= 8 ? 5 : 0;
            c.stream = 1;
            add_config(&c);
            c.colc = c.colc_shift = 0;
            c.xsmem = 1; /* x in shared memory: gathers from the copy */
            c.block = vw == 32 ? 1024 : 512;
            add_config(&c);
        }
    memset(&c, 0, sizeof c);
    c.family = SDI_SPMV_TINY;
    c.block = 1024;
    c.ipt = 5;
    add_config(&c);
    c.family = SDI_SPMV_MERGE;
    c.block = 256;
    c.ipt = 8;
    c.rp32 = 1;
    c.stream = 1;
    add_config(&c);
    memset(&c, 0, sizeof c);
    c.family = SDI_SPMV_CSR_ADAPTIVE;
    c.block = 128;
    c.cap = 1024;
    c.maxr = 128;
    c.piece = 4096;
    add_config(&c);
    for (int ell = 0; ell <= 1; ell++)
        for (int rpt = 1; rpt <= 4; rpt *= 2)
            for (int tpr = 1; tpr <= 8; tpr *= 8) {
                memset(&c, 0, sizeof c);
                c.family = ell ? SDI_SPMV_ELL : SDI_SPMV_SELL;
                c.block = 256;
                c.c = 64;
                c.sigma = rpt == 2 ? 512 : 1;
                c.rpt = rpt;
                c.tpr = tpr;
                c.unroll = 4;
                add_config(&c);
                if (rpt == 1) { /* the large-matrix sweep's 8 slots in flight */
                    c.unroll = 8;
                    c.stream = 1;
                    add_config(&c);
                }
            }
    static const int bg[][2] = {{2, 2}, {2, 32}, {4, 4}, {4, 16}, {8, 16}, {8, 32}, {16, 32}};
    for (size_t i = 0; i < sizeof bg / sizeof bg[0]; i++) {
        memset(&c, 0, sizeof c);
        c.family = SDI_SPMV_BSR;
        c.block = 256;
        c.b = bg[i][0];
        c.g = bg[i][1];
        add_config(&c);
    }
    for (int x = 0; x <= 1; x++) {
        memset(&c, 0, sizeof c);
        c.family = SDI_SPMV_DIA;
        c.block = 256;
        c.rpt = x ? 4 : 2;
        c.xwin = x ? 4096 : 0;
        add_config(&c);
    }
    memset(&c, 0, sizeof c);
    c.family = SDI_SPMV_TILES16;
    c.block = 256;
    c.dense_min = 128;
    c.coo_max = 8;
    c.stream = 1;
    add_config(&c);
    memset(&c, 0, sizeof c);
    c.family = SDI_SPMV_COO;
    c.block = 128;
    c.chunk = 4;
    add_config(&c);
    for (int ipt = 2; ipt <= 8; ipt *= 2) { /* entries per lane and step */
        c.chunk = 3;
        c.ipt = ipt;
        add_config(&c);
    }
    /* x with the L2 evict-last policy (SD_STREAM 2): inline PTX, so every template that
     * gathers x compiles it once here. */
    for (int i = 0; i < g_n; i++) {
        if (strstr(g_v[i].key, "SD_STREAM=1") == NULL || strstr(g_v[i].key, "spmv_dia") != NULL)
            continue;
        sdi_spmv_config c2;
        if (sdi_spmv_config_parse(g_v[i].label, &c2) != SD_OK)
            continue;
        c2.stream = 2;
        add_config(&c2);
    }
}

/* The evict-last variant is enumerated beside the streaming default of a matrix larger
 * than L2 when x fits in ¾ of L2, and not when x does not. */
static void test_stream2_enumerated(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=2000,deg=8", 1, &a));
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(&a, &st));
    sd_csr_free(&a);
    st.nnz = 30000000; /* 240 MB of matrix: > 2x a 60 MB L2 */
    for (int big_x = 0; big_x <= 1; big_x++) {
        st.rows = st.cols = big_x ? 20000000 : 2000000; /* x 80 MB or 8 MB */
        const sdi_task t = task_of(NULL, &st);
        sdi_plan_list l = {0};
        int n1 = 0, n2 = 0;
        sweep_of(&t, SDI_SPMV_CSR_VEC, 1, &l);
        for (int k = 0; k < l.n; k++) {
            const sdi_spmv_config *v = &l.v[k].p.spmv;
            n1 += v->stream == 1;
            n2 += v->stream == 2;
            if (v->stream == 2) {
                sdi_lowered p;
                SDT_OK(spmv_family(SDI_SPMV_CSR_VEC)->source(&t, &l.v[k], &p));
                int found = 0;
                for (int m = 0; m < p.nmacros; m++)
                    found |= !strcmp(p.macro_name[m], "SD_STREAM") && !strcmp(p.macro_value[m], "2");
                SDT_CHECK(found, "stream 2 config without SD_STREAM=2");
                sdi_lowered_free(&p);
            }
        }
        sdi_plan_list_free(&l);
        SDT_CHECK(n1 > 0, "x %s: no streaming config enumerated", big_x ? "80 MB" : "8 MB");
        SDT_CHECK(big_x ? n2 == 0 : n2 > 0, "x %s: %d evict-last configs", big_x ? "80 MB" : "8 MB", n2);
    }
    /* The hint round-trips through the config text and a value beyond 2 is refused. */
    const sdi_task t = task_of(NULL, &st);
    const sdi_family *fam = spmv_family(SDI_SPMV_CSR_VEC);
    sdi_plan p;
    sdi_spmv_config back;
    SDT_OK(fam->defaults(&t, &p));
    p.p.spmv.stream = 2;
    char text[160];
    sdi_spmv_config_describe(&p.p.spmv, text, sizeof text);
    SDT_OK(sdi_spmv_config_parse(text, &back));
    SDT_CHECK(back.stream == 2, "'%s' parsed to stream %d", text, back.stream);
    SDT_OK(fam->check(&t, &p));
    p.p.spmv.stream = 3;
    SDT_CHECK(fam->check(&t, &p) != SD_OK, "stream 3 accepted");
    sdi_error_clear();
}

/* x in shared memory (csr_vec xs): enumerated right after the default where x fits and
 * the entries outnumber its copies; refused where it does not fit or on another family;
 * lowered to a persistent grid with x's bytes of dynamic shared memory and the column
 * count as the last argument. */
static void test_xsmem(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("uniform:rows=3000,cols=2001,deg=40", 1, &a));
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(&a, &st));
    sdi_task t = task_of(&a, &st);
    const sdi_family *fam = spmv_family(SDI_SPMV_CSR_VEC);
    sdi_plan_list l = {0};
    int at = -1;
    sweep_of(&t, SDI_SPMV_CSR_VEC, 1, &l);
    for (int k = 0; k < l.n && at < 0; k++)
        if (l.v[k].p.spmv.xsmem)
            at = k;
    SDT_CHECK(at == 1, "xs member at %d of %d (want 1: right after the default)", at, l.n);
    if (at >= 0) {
        sdi_plan p = l.v[at];
        sdi_spmv_config back;
        char text[160];
        sdi_spmv_config_describe(&p.p.spmv, text, sizeof text);
        SDT_CHECK(strstr(text, " xs") != NULL, "'%s' does not name xs", text);
        SDT_OK(sdi_spmv_config_parse(text, &back));
        SDT_CHECK(memcmp(&p.p.spmv, &back, sizeof back) == 0, "'%s' does not round-trip", text);
        sdi_lowered low;
        SDT_OK(fam->lower(&t, &p, &low));
        SDT_CHECK(low.nlaunches == 1, "%d launches", low.nlaunches);
        const sdi_low_launch *ln = &low.launch[0];
        const int per_sm = sdi_spmv_resident_ctas(p.p.spmv.block, 4 * 2004, &g_h200);
        SDT_CHECK(ln->dyn_smem == 4 * 2004 && ln->grid_stride == 1, "dyn %u stride %d",
                  ln->dyn_smem, ln->grid_stride);
        SDT_CHECK(per_sm >= 1 && ln->grid[0] <= (unsigned)(132 * per_sm), "grid %u, %d CTAs per SM",
                  ln->grid[0], per_sm);
        SDT_CHECK(ln->args[ln->nargs - 1].kind == SDI_LOW_ARG_I32 &&
                      ln->args[ln->nargs - 1].value == 2001,
                  "last argument is not the column count");
        sdi_lowered_free(&low);
        /* 60 000 columns (240 KB) exceed the 227 KB a CTA may opt in to. */
        sdi_spmv_stats wide = st;
        wide.cols = 60000;
        t.spmv = &wide;
        SDT_CHECK(fam->check(&t, &p) == SD_ERR_UNSUPPORTED,
                  "x of 60000 columns accepted in shared memory");
        SDT_CHECK(strstr(sd_last_error(), "opt in") != NULL, "message '%s'", sd_last_error());
        sdi_error_clear();
        /* 56 000 columns (224 KB) fit one CTA of 1024 threads per SM. */
        wide.cols = 56000;
        p.p.spmv.block = 1024;
        SDT_OK(fam->check(&t, &p));
        SDT_CHECK(sdi_spmv_resident_ctas(1024, 4 * 56000, &g_h200) == 1, "%d CTAs per SM",
                  sdi_spmv_resident_ctas(1024, 4 * 56000, &g_h200));
        t.spmv = &st;
        sdi_spmv_config sell = p.p.spmv;
        sell.family = SDI_SPMV_SELL;
        sdi_spmv_plan_set(&p, &sell);
        SDT_CHECK(spmv_family(SDI_SPMV_SELL)->check(&t, &p) != SD_OK, "xs accepted for sell");
        sdi_error_clear();
    }
    sdi_plan_list_free(&l);
    /* Few entries per column: x's copies would cost more than the gathers. */
    st.nnz = 15LL * st.cols;
    sweep_of(&t, SDI_SPMV_CSR_VEC, 2, &l);
    for (int k = 0; k < l.n; k++)
        SDT_CHECK(!l.v[k].p.spmv.xsmem, "xs enumerated at 15 entries a column");
    sdi_plan_list_free(&l);
    sd_csr_free(&a);
}

static void test_compile_all(void)
{
    add_sweeps();
    add_explicit();
    int per_template[16] = {0};
    static const char *const templates[] = {"spmv_csr_vec.cuh", "spmv_csr_adaptive.cuh",
                                            "spmv_merge.cuh", "spmv_sell.cuh", "spmv_bsr.cuh",
                                            "spmv_tiles16.cuh", "spmv_coo.cuh", "spmv_dia.cuh"};
    const int ntmpl = (int)(sizeof templates / sizeof templates[0]);
    printf("# %d distinct template variants\n", g_n);
    if (getenv("SD_LIST_VARIANTS") != NULL)
        for (int i = 0; i < g_n; i++)
            printf("variant %s\n", g_v[i].key);
    fflush(stdout);
    int failed = 0;
    char first_error[1024] = "";
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failed)
    for (int i = 0; i < g_n; i++) {
        /* the request as sdi_lowered_jit_request makes it, for sm_90 */
        const sdi_lowered *src = &g_v[i].src;
        sdi_macro m[SDI_LOW_MAX_MACROS];
        for (int k = 0; k < src->nmacros; k++) {
            m[k].name = src->macro_name[k];
            m[k].value = src->macro_value[k];
        }
        sdi_jit_request req = {.template_name = src->template_name, .macros = m,
                               .nmacros = src->nmacros, .arch = "sm_90",
                               .kernel_name = g_v[i].label};
        sdi_cubin cub;
        sd_status s = sdi_jit_compile(&req, &cub);
        if (s != SD_OK) {
            failed++;
#pragma omp critical(first_error)
            {
                fprintf(stderr, "  compile failed: %s: %s\n", g_v[i].key, sd_last_error());
                if (first_error[0] == '\0')
                    snprintf(first_error, sizeof first_error, "%s", sd_last_error());
            }
        } else {
            if (cub.size == 0)
                failed++;
            sdi_cubin_free(&cub);
        }
    }
    SDT_CHECK(failed == 0, "%d of %d variants failed to compile; first: %s", failed, g_n,
              first_error);
    for (int i = 0; i < g_n; i++)
        for (int t = 0; t < ntmpl; t++)
            if (strcmp(g_v[i].src.template_name, templates[t]) == 0)
                per_template[t]++;
    for (int i = 0; i < g_n; i++)
        sdi_lowered_free(&g_v[i].src);
    for (int t = 0; t < ntmpl; t++) {
        printf("#   %-22s %d variants\n", templates[t], per_template[t]);
        SDT_CHECK(per_template[t] > 0, "no variant of %s", templates[t]);
    }
}

/* A macro value the template rejects is a compile error naming the template. */
static void test_bad_variant_rejected(void)
{
    sdi_macro m[2] = {{"SD_VW", "3"}, {"SD_BLOCK", "256"}};
    sdi_jit_request req = {.template_name = "spmv_csr_vec.cuh", .macros = m, .nmacros = 2,
                           .arch = "sm_90", .kernel_name = "sd_spmv_csr_vec (vw=3)"};
    sdi_cubin cub;
    SDT_STATUS(sdi_jit_compile(&req, &cub), SD_ERR_COMPILE);
    SDT_CHECK(strstr(sd_last_error(), "SD_VW") != NULL, "message '%s'", sd_last_error());
}

int main(void)
{
    sdt_init("test_spmv_compile");
    if (sdi_gpu_profile("h200", &g_h200) != SD_OK)
        return 1;
    SDT_RUN(test_stream2_enumerated);
    SDT_RUN(test_xsmem);
    SDT_RUN(test_compile_all);
    SDT_RUN(test_bad_variant_rejected);
    return sdt_finish();
}
