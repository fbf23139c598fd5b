/* tests/cpu/test_spgemm_compile.c: every SpGEMM template variant compiles with NVRTC for
 * sm_90 (no GPU needed): the plan-time kernels, the scan, every accumulator kind × lane
 * count × size × phase at 128, 256 and 512 threads, and the generated source of each plan
 * family on a synthetic product (its kernels must be in the CUBIN). */
#define _GNU_SOURCE
#include <string.h>

#include "lower/spgemm_lower.h"
#include "runtime/runtime.h"
#include "sdt.h"

static int compile(const char *template_name, const char *source, const char *label,
                   sdi_cubin *out)
{
    sdi_jit_request req;
    memset(&req, 0, sizeof req);
    req.template_name = template_name;
    req.source = source;
    req.arch = "sm_90";
    req.kernel_name = label;
    sd_status s = sdi_jit_compile(&req, out);
    SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
    if (s == SD_OK)
        printf("  %s: %.0f ms, %zu bytes of CUBIN\n", label, out->compile_ms, out->size);
    return s == SD_OK;
}

static int cubin_has(const sdi_cubin *c, const char *name)
{
    return memmem(c->cubin, c->size, name, strlen(name) + 1) != NULL;
}

static void test_prep_and_scan(void)
{
    sdi_cubin c;
    if (compile("spgemm_prep.cuh", NULL, "spgemm_prep", &c)) {
        static const char *const names[] = {
            "sd_spgemm_prep_rowinfo",   "sd_spgemm_prep_tcount",   "sd_spgemm_prep_tscatter",
            "sd_spgemm_prep_tsort_warp", "sd_spgemm_prep_tsort_cta", "sd_spgemm_prep_tsort_long",
            "sd_spgemm_prep_gather"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            SDT_CHECK(cubin_has(&c, names[i]), "kernel %s missing", names[i]);
        sdi_cubin_free(&c);
    }
    if (compile("spgemm_scan.cuh", NULL, "spgemm_scan", &c)) {
        SDT_CHECK(cubin_has(&c, "sd_spgemm_scan"), "scan kernel missing");
        sdi_cubin_free(&c);
    }
}

static void all_variants(int threads)
{
    char *src = NULL;
    SDT_OK(sdi_spgemm_lower_all_variants(threads, &src));
    if (src == NULL)
        return;
    char label[64];
    snprintf(label, sizeof label, "spgemm_all_T%d", threads);
    sdi_cubin c;
    if (compile(NULL, src, label, &c)) {
        /* one kernel per kind × phase (long lists split in parts of SD_SG_MAX_SEGS) */
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_tiny_ph0_0"), "tiny SYM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_ghash_ph2_0"), "ghash ONE kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_gdense_ph1_0"), "gdense NUM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_chash_ph1_0"), "chash NUM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_cdense_ph0_0"), "cdense SYM kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_global_ph2_0"), "global ONE kernel missing");
        SDT_CHECK(cubin_has(&c, "sd_spgemm_all_copy_ph0_0"), "copy kernel missing");
        sdi_cubin_free(&c);
    }
    sdi_free(src);
}

static void test_all_variants_256(void) { all_variants(256); }
static void test_all_variants_128(void) { all_variants(128); }
static void test_all_variants_512(void) { all_variants(512); }

/* A product whose rows reach every kind under the hybrid rules: tiny rows, mid rows with
 * wide spans (hash), narrow rows (dense), huge rows (CTA hash and global stripes). */
static void synth_rows(int32_t m, int32_t n, int64_t *u, int32_t *lo, int32_t *hi)
{
    for (int32_t i = 0; i < m; i++) {
        int64_t uu;
        int64_t span;
        switch (i % 8) {
        case 0: uu = 0; span = 0; break;
        case 1: uu = 5; span = 1000; break;
        case 2: uu = 30; span = 5000; break;
        case 3: uu = 200; span = 100000; break;
        case 4: uu = 3000; span = 600; break; /* narrow: dense stripe */
        case 5: uu = 1500; span = 200000; break;
        case 6: uu = 20000; span = 30000; break;
        default: uu = 400000; span = n; break; /* global */
        }
        if (i == 7)
            uu = 5; /* keep the huge rows few */
        u[i] = uu;
        lo[i] = uu > 0 ? (int32_t)((i * 7919ll) % (n - span + 1)) : -1;
        hi[i] = uu > 0 ? lo[i] + (int32_t)span - 1 : -1;
    }
}

static void test_families_lowered(void)
{
    enum { M = 4096, N = 1 << 20 };
    int64_t *u = sdi_malloc_array(M, sizeof *u);
    int32_t *lo = sdi_malloc_array(M, sizeof *lo), *hi = sdi_malloc_array(M, sizeof *hi);
    SDT_CHECK(u && lo && hi, "allocation");
    if (!u || !lo || !hi)
        goto out;
    synth_rows(M, N, u, lo, hi);
    sdi_sg_rowinfo ri = {.m = M, .n = N, .u = u, .lo = lo, .hi = hi, .b_row_max = 1000};
    sdi_gpu_props props;
    SDT_OK(sdi_gpu_profile("H200", &props));
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&props, &lim);
    for (int f = 0; f < SDI_SPGEMM_NFAMILIES; f++) {
        sdi_spgemm_config c;
        SDT_OK(sdi_spgemm_config_default(f, &c));
        sdi_sg_schedule s;
        SDT_OK(sdi_sg_schedule_build(&c, &lim, &ri, &s));
        sdi_sg_lowered low;
        SDT_OK(sdi_spgemm_lower(&s, &low));
        char label[64];
        snprintf(label, sizeof label, "spgemm_%s", sdi_spgemm_family_name(f));
        sdi_cubin cb;
        if (low.source != NULL && compile(NULL, low.source, label, &cb)) {
            for (int l = 0; l < low.nkernels; l++)
                SDT_CHECK(cubin_has(&cb, low.names[l]), "%s: kernel %s missing", label,
                          low.names[l]);
            SDT_CHECK(cubin_has(&cb, "sd_spgemm_scan"), "%s: scan missing", label);
            sdi_cubin_free(&cb);
        }
        sdi_sg_lowered_free(&low);
        sdi_sg_schedule_free(&s);
    }
out:
    sdi_free(u);
    sdi_free(lo);
    sdi_free(hi);
}

int main(void)
{
    sdt_init("test_spgemm_compile");
    SDT_RUN(test_prep_and_scan);
    SDT_RUN(test_families_lowered);
    SDT_RUN(test_all_variants_256);
    SDT_RUN(test_all_variants_128);
    SDT_RUN(test_all_variants_512);
    return sdt_finish();
}
