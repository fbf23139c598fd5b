/* tests/cpu/test_spmv_compile.c: every SpMV template variant compiles with NVRTC for
 * sm_90 (no GPU needed): the wide θ_H sweep of every family over matrices of different
 * shapes, plus explicit variants covering every macro branch (lane widths, vector loads,
 * 32-bit row pointers, 16-bit column deltas, cache hints, sorted SELL, ELL, every BSR
 * block size, the x window of DIA, the single-CTA merge path). Distinct sources are
 * compiled once each, in parallel. */
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "lower/spmv_lower.h"
#include "sdt.h"

#define MAXV 512

typedef struct {
    char key[512]; /* template + macros: what the cubin depends on */
    char label[160];
    sdi_spmv_plan src;
} variant;

static variant g_v[MAXV];
static int g_n;

static void add_config(const sdi_spmv_config *c)
{
    if (g_n >= MAXV)
        return;
    variant *v = &g_v[g_n];
    memset(v, 0, sizeof *v);
    sd_status s = sdi_spmv_config_source(c, &v->src);
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
        if (strcmp(g_v[i].key, v->key) == 0)
            return;
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
        sdi_spmv_config *v = NULL;
        int n = 0;
        SDT_OK(sdi_spmv_enumerate(&st, NULL, 0, 2, 0, &v, &n));
        for (int k = 0; k < n; k++)
            add_config(&v[k]);
        sdi_free(v);
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
        sdi_spmv_config *v = NULL;
        int n = 0, n1 = 0, n2 = 0;
        SDT_OK(sdi_spmv_enumerate(&st, NULL, 1u << SDI_SPMV_CSR_VEC, 1, 0, &v, &n));
        for (int k = 0; k < n; k++) {
            n1 += v[k].stream == 1;
            n2 += v[k].stream == 2;
            if (v[k].stream == 2) {
                sdi_spmv_plan p;
                memset(&p, 0, sizeof p);
                SDT_OK(sdi_spmv_config_source(&v[k], &p));
                int found = 0;
                for (int m = 0; m < p.nmacros; m++)
                    found |= !strcmp(p.macro_name[m], "SD_STREAM") && !strcmp(p.macro_value[m], "2");
                SDT_CHECK(found, "stream 2 config without SD_STREAM=2");
            }
        }
        sdi_free(v);
        SDT_CHECK(n1 > 0, "x %s: no streaming config enumerated", big_x ? "80 MB" : "8 MB");
        SDT_CHECK(big_x ? n2 == 0 : n2 > 0, "x %s: %d evict-last configs", big_x ? "80 MB" : "8 MB", n2);
    }
    /* The hint round-trips through the config text and a value beyond 2 is refused. */
    sdi_spmv_config c, back;
    SDT_OK(sdi_spmv_config_default(SDI_SPMV_CSR_VEC, &st, NULL, &c));
    c.stream = 2;
    char text[160];
    sdi_spmv_config_describe(&c, text, sizeof text);
    SDT_OK(sdi_spmv_config_parse(text, &back));
    SDT_CHECK(back.stream == 2, "'%s' parsed to stream %d", text, back.stream);
    SDT_OK(sdi_spmv_config_check(&c, &st, NULL));
    c.stream = 3;
    SDT_CHECK(sdi_spmv_config_check(&c, &st, NULL) != SD_OK, "stream 3 accepted");
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
    sdi_spmv_config *v = NULL;
    int n = 0, at = -1;
    SDT_OK(sdi_spmv_enumerate(&st, NULL, 1u << SDI_SPMV_CSR_VEC, 1, 0, &v, &n));
    for (int k = 0; k < n && at < 0; k++)
        if (v[k].xsmem)
            at = k;
    SDT_CHECK(at == 1, "xs member at %d of %d (want 1: right after the default)", at, n);
    if (at >= 0) {
        sdi_spmv_config c = v[at], back;
        char text[160];
        sdi_spmv_config_describe(&c, text, sizeof text);
        SDT_CHECK(strstr(text, " xs") != NULL, "'%s' does not name xs", text);
        SDT_OK(sdi_spmv_config_parse(text, &back));
        SDT_CHECK(memcmp(&c, &back, sizeof c) == 0, "'%s' does not round-trip", text);
        sdi_spmv_plan p;
        SDT_OK(sdi_spmv_lower(&c, &a, &st, NULL, &p));
        SDT_CHECK(p.nlaunches == 1, "%d launches", p.nlaunches);
        const sdi_spmv_launch *l = &p.launch[0];
        const int per_sm = sdi_spmv_ctas_per_sm(&c, a.cols, NULL);
        SDT_CHECK(l->dyn_smem == 4 * 2004 && l->grid_stride == 1, "dyn %u stride %d", l->dyn_smem,
                  l->grid_stride);
        SDT_CHECK(per_sm >= 1 && l->grid <= (unsigned)(132 * per_sm), "grid %u, %d CTAs per SM",
                  l->grid, per_sm);
        SDT_CHECK(l->args[l->nargs - 1].kind == SDI_SPMV_ARG_I32 && l->args[l->nargs - 1].v == 2001,
                  "last argument is not the column count");
        sdi_spmv_plan_free(&p);
        /* 60 000 columns (240 KB) exceed the 227 KB a CTA may opt in to. */
        sdi_spmv_stats wide = st;
        wide.cols = 60000;
        SDT_CHECK(sdi_spmv_config_check(&c, &wide, NULL) == SD_ERR_UNSUPPORTED,
                  "x of 60000 columns accepted in shared memory");
        SDT_CHECK(strstr(sd_last_error(), "opt in") != NULL, "message '%s'", sd_last_error());
        sdi_error_clear();
        /* 56 000 columns (224 KB) fit one CTA of 1024 threads per SM. */
        wide.cols = 56000;
        c.block = 1024;
        SDT_OK(sdi_spmv_config_check(&c, &wide, NULL));
        SDT_CHECK(sdi_spmv_ctas_per_sm(&c, wide.cols, NULL) == 1, "%d CTAs per SM",
                  sdi_spmv_ctas_per_sm(&c, wide.cols, NULL));
        c.family = SDI_SPMV_SELL;
        SDT_CHECK(sdi_spmv_config_check(&c, &st, NULL) != SD_OK, "xs accepted for sell");
        sdi_error_clear();
    }
    sdi_free(v);
    /* Few entries per column: x's copies would cost more than the gathers. */
    st.nnz = 15LL * st.cols;
    SDT_OK(sdi_spmv_enumerate(&st, NULL, 1u << SDI_SPMV_CSR_VEC, 2, 0, &v, &n));
    for (int k = 0; k < n; k++)
        SDT_CHECK(!v[k].xsmem, "xs enumerated at 15 entries a column");
    sdi_free(v);
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
        sdi_macro m[SDI_SPMV_MAX_MACROS];
        sdi_jit_request req;
        sdi_spmv_plan_jit_request(&g_v[i].src, "sm_90", m, &req);
        req.kernel_name = g_v[i].label;
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
    SDT_RUN(test_stream2_enumerated);
    SDT_RUN(test_xsmem);
    SDT_RUN(test_compile_all);
    SDT_RUN(test_bad_variant_rejected);
    return sdt_finish();
}
