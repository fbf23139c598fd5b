/* tests/cpu/test_plan_json.c: every operator's configuration and the implementation
 * record read back from their JSON exactly as written (the kernel cache stores nothing
 * else), over the enumerated sweeps of several matrices and over random field values; and
 * records the reader must refuse. */
#include <stddef.h>

#include "core/rng.h"
#include "gen/gen.h"
#include "plan/spgemm.h"
#include "plan/spmm.h"
#include "plan/spmv.h"
#include "sdt.h"
#include "tune/impl_cache.h"

static const char *const matrices[] = {"uniform:rows=3000,deg=8", "powerlaw:rows=4000,deg=6",
                                       "stencil2d:n=40", "banded:n=2000,bw=5", "bimodal:rows=3000,short=3,long=400,frac=0.02"};
#define NMAT ((int)(sizeof matrices / sizeof matrices[0]))

/* Writes c with write(), parses the text and reads it back with read() into out. */
#define ROUND_TRIP(write, read, c, out, ok)                                                \
    do {                                                                                   \
        sdi_json j_;                                                                       \
        sdi_json_init(&j_, 0);                                                             \
        write(c, &j_);                                                                     \
        ok = false;                                                                        \
        if (sdi_json_finish(&j_) == SD_OK) {                                               \
            sdi_jvalue v_;                                                                 \
            if (sdi_json_parse(j_.buf, -1, &v_) == SD_OK) {                                \
                ok = read(&v_, out) == SD_OK;                                              \
                sdi_jvalue_free(&v_);                                                      \
            }                                                                              \
        }                                                                                  \
        sdi_json_free(&j_);                                                                \
    } while (0)

static void fill_random(void *cfg, size_t size, sdi_rng *r)
{
    /* Every int32 field at a random value, small or extreme (the structs hold int32 and
     * int64 fields only; the family / template field is set by the caller). */
    int32_t *w = cfg;
    for (size_t i = 0; i < size / sizeof *w; i++) {
        uint64_t x = sdi_rng_next(r);
        w[i] = (x & 3) == 0 ? (int32_t)(uint32_t)(x >> 32) : (int32_t)(x >> 40) % 4097 - 16;
    }
}

static void test_spmv(void)
{
    int total = 0;
    for (int m = 0; m < NMAT; m++) {
        sd_csr a;
        sdi_spmv_stats st;
        sdi_spmv_config *list = NULL;
        int n = 0;
        SDT_OK(sdi_gen(matrices[m], 7, &a));
        SDT_OK(sdi_spmv_stats_compute(&a, &st));
        SDT_OK(sdi_spmv_enumerate(&st, NULL, 0, 2, 5000, &list, &n));
        for (int i = 0; i < n; i++) {
            sdi_spmv_config back;
            bool ok;
            ROUND_TRIP(sdi_spmv_config_json, sdi_spmv_config_from_json, &list[i], &back, ok);
            SDT_CHECK(ok && memcmp(&back, &list[i], sizeof back) == 0, "%s: SpMV candidate %d", matrices[m], i);
        }
        total += n;
        sdi_free(list);
        sd_csr_free(&a);
    }
    SDT_CHECK(total > 100, "only %d SpMV candidates", total);
    sdi_rng r;
    sdi_rng_seed(&r, sdt_seed, 1, 0);
    for (int t = 0; t < 2000; t++) {
        sdi_spmv_config c, back;
        fill_random(&c, sizeof c, &r);
        c.family = (int32_t)sdi_rng_below(&r, SDI_SPMV_NFAMILIES);
        bool ok;
        ROUND_TRIP(sdi_spmv_config_json, sdi_spmv_config_from_json, &c, &back, ok);
        SDT_CHECK(ok && memcmp(&back, &c, sizeof c) == 0, "random SpMV configuration %d", t);
    }
}

static void test_spmm(void)
{
    static const int ks[] = {1, 8, 32, 256};
    int total = 0;
    for (int m = 0; m < NMAT; m++) {
        sd_csr a;
        SDT_OK(sdi_gen(matrices[m], 7, &a));
        for (int ki = 0; ki < 4; ki++) {
            sdi_spmm_config *list = NULL;
            int n = 0;
            SDT_OK(sdi_spmm_enumerate(&a, ks[ki], 0, 2, 5000, &list, &n));
            for (int i = 0; i < n; i++) {
                sdi_spmm_config back;
                bool ok;
                ROUND_TRIP(sdi_spmm_config_json, sdi_spmm_config_from_json, &list[i], &back, ok);
                SDT_CHECK(ok && memcmp(&back, &list[i], sizeof back) == 0, "%s K=%d: SpMM candidate %d",
                          matrices[m], ks[ki], i);
            }
            total += n;
            sdi_free(list);
        }
        sd_csr_free(&a);
    }
    SDT_CHECK(total > 100, "only %d SpMM candidates", total);
    sdi_rng r;
    sdi_rng_seed(&r, sdt_seed, 2, 0);
    for (int t = 0; t < 2000; t++) {
        sdi_spmm_config c, back;
        fill_random(&c, sizeof c, &r);
        c.tmpl = (int32_t)sdi_rng_below(&r, SDI_SPMM_NTEMPLATES);
        bool ok;
        ROUND_TRIP(sdi_spmm_config_json, sdi_spmm_config_from_json, &c, &back, ok);
        SDT_CHECK(ok && memcmp(&back, &c, sizeof c) == 0, "random SpMM configuration %d", t);
    }
}

static void test_spgemm(void)
{
    int total = 0;
    const sdi_sg_summary sums[] = {{1000, 1000, 4.0e4, 90, 0.9, 0.8},
                                   {200000, 200000, 3.0e7, 40000, 0.2, 0.1},
                                   {50000, 80000, 1.0e6, 600, 0.5, 0.5}};
    for (int m = 0; m < 3; m++) {
        sdi_spgemm_config *list = NULL;
        int n = 0;
        SDT_OK(sdi_spgemm_enumerate(&sums[m], 0, 2, 5000, &list, &n));
        for (int i = 0; i < n; i++) {
            sdi_spgemm_config back;
            bool ok;
            ROUND_TRIP(sdi_spgemm_config_json, sdi_spgemm_config_from_json, &list[i], &back, ok);
            SDT_CHECK(ok && memcmp(&back, &list[i], sizeof back) == 0, "summary %d: SpGEMM candidate %d", m, i);
        }
        total += n;
        sdi_free(list);
    }
    SDT_CHECK(total > 20, "only %d SpGEMM candidates", total);
    sdi_rng r;
    sdi_rng_seed(&r, sdt_seed, 3, 0);
    for (int t = 0; t < 2000; t++) {
        sdi_spgemm_config c, back;
        memset(&c, 0, sizeof c); /* the struct's padding stays zero, as the reader leaves it */
        fill_random(&c, offsetof(sdi_spgemm_config, ws_budget), &r);
        c.fast_compile = (int32_t)(uint32_t)sdi_rng_next(&r);
        c.warp_brow = (int32_t)(uint32_t)sdi_rng_next(&r);
        c.cta_u = (int32_t)(uint32_t)sdi_rng_next(&r);
        c.family = (int32_t)sdi_rng_below(&r, SDI_SPGEMM_NFAMILIES);
        /* int64 fields within the range JSON numbers hold exactly (±2^53) */
        c.ws_budget = (int64_t)(sdi_rng_next(&r) >> 12) - (1ll << 51);
        c.chunk_rows = (int64_t)(sdi_rng_next(&r) >> 11);
        bool ok;
        ROUND_TRIP(sdi_spgemm_config_json, sdi_spgemm_config_from_json, &c, &back, ok);
        SDT_CHECK(ok && memcmp(&back, &c, sizeof c) == 0, "random SpGEMM configuration %d", t);
    }
}

static bool record_round_trip(const sdi_impl *im, int general_b, sdi_impl *back, int *gb_back)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_impl_record_json(im, general_b, &j);
    bool ok = false;
    if (sdi_json_finish(&j) == SD_OK) {
        sdi_jvalue v;
        if (sdi_json_parse(j.buf, -1, &v) == SD_OK) {
            ok = sdi_impl_record_read(&v, back, gb_back) == SD_OK;
            sdi_jvalue_free(&v);
        }
    }
    sdi_json_free(&j);
    return ok;
}

static void test_record(void)
{
    sdi_impl im, back;
    int gb = -1;
    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_SPMV;
    im.op = SD_OP_SPMV;
    im.k = 1;
    SDT_OK(sdi_spmv_config_parse("csr_vec t=256 vw=8 vec=4 u=2 rp32 stream", &im.spmv_cfg));
    SDT_CHECK(record_round_trip(&im, 0, &back, &gb) && back.kind == im.kind && back.op == im.op &&
                  back.k == 1 && memcmp(&back.spmv_cfg, &im.spmv_cfg, sizeof im.spmv_cfg) == 0 && gb == 0,
              "SpMV record");

    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_SPMM;
    im.op = SD_OP_SPMM;
    im.k = 64;
    im.spmm_cfg.tmpl = 1;
    im.spmm_cfg.k = 64;
    im.spmm_cfg.warps = 4;
    im.spmm_cfg.vec = 4;
    SDT_CHECK(record_round_trip(&im, 0, &back, &gb) && back.kind == SDI_IMPL_SPMM && back.k == 64 &&
                  memcmp(&back.spmm_cfg, &im.spmm_cfg, sizeof im.spmm_cfg) == 0,
              "SpMM record");

    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_VENDOR;
    im.op = SD_OP_SPMM;
    im.k = 8;
    im.vendor_plain = true;
    snprintf(im.vendor_name, sizeof im.vendor_name, "csr_alg2");
    SDT_CHECK(record_round_trip(&im, 0, &back, &gb) && back.kind == SDI_IMPL_VENDOR && back.vendor_plain &&
                  strcmp(back.vendor_name, "csr_alg2") == 0 && back.k == 8,
              "cuSPARSE record");

    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_SPGEMM;
    im.op = SD_OP_SPGEMM;
    im.k = 1;
    im.sg_aat = 1;
    SDT_OK(sdi_spgemm_config_default(0, &im.spgemm_cfg));
    im.spgemm_cfg.ws_budget = 123456789012ll;
    SDT_CHECK(record_round_trip(&im, 1, &back, &gb) && back.kind == SDI_IMPL_SPGEMM && back.sg_aat == 1 &&
                  gb == 1 && memcmp(&back.spgemm_cfg, &im.spgemm_cfg, sizeof im.spgemm_cfg) == 0,
              "SpGEMM record");
}

/* Records the reader refuses, each with a message naming the cause. */
static void test_record_refused(void)
{
    static const struct {
        const char *json, *cause;
    } bad[] = {
        {"{\"format\":0,\"kind\":\"spmv\",\"op\":\"spmv\",\"k\":1,\"config\":{\"text\":\"csr_vec\"},\"aat\":0}",
         "format"},
        {"{\"format\":1,\"kind\":\"dense\",\"op\":\"spmv\",\"k\":1,\"aat\":0}", "unknown kind"},
        {"{\"format\":1,\"kind\":\"spmv\",\"op\":\"spmx\",\"k\":1,\"aat\":0}", "unknown operator"},
        {"{\"format\":1,\"kind\":\"spmv\",\"op\":\"spmv\",\"k\":1,\"config\":{\"text\":\"nosuch b=1\"},\"aat\":0}",
         "unknown family"},
        {"{\"format\":1,\"kind\":\"spmm\",\"op\":\"spmm\",\"k\":8,\"config\":{\"template\":\"csr_row\",\"k\":8},"
         "\"aat\":0}",
         "field 'warps'"},
        {"{\"format\":1,\"kind\":\"spgemm\",\"op\":\"spgemm\",\"k\":1,\"config\":{\"family\":\"x\"},\"aat\":0}",
         "unknown family"},
        {"{\"format\":1,\"kind\":\"vendor\",\"op\":\"spmv\",\"k\":1,\"vendor\":null,\"aat\":0}", "cuSPARSE variant"},
        {"[1,2]", "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sdi_jvalue v;
        SDT_OK(sdi_json_parse(bad[i].json, -1, &v));
        sdi_impl im;
        int gb;
        sd_status s = sdi_impl_record_read(&v, &im, &gb);
        SDT_CHECK(s == SD_ERR_PARSE && strstr(sd_last_error(), bad[i].cause) != NULL,
                  "record %zu: status %s, message '%s' (expected '%s')", i, sd_status_string(s), sd_last_error(),
                  bad[i].cause);
        sdi_error_clear();
        sdi_jvalue_free(&v);
    }
    /* A 32-bit field out of range or fractional is refused, not wrapped. */
    sdi_jvalue v;
    sdi_spmm_config c;
    SDT_OK(sdi_json_parse("{\"template\":\"csr_row\",\"k\":8,\"warps\":4294967297,\"klanes\":1,\"nzpar\":1,"
                          "\"vec\":1,\"coarsen\":1,\"regcap\":0,\"split_threshold\":0,\"chunk\":0,"
                          "\"split_mode\":0,\"long_nzpar\":0,\"win_rows\":0,\"win_cap\":0,\"cw_width\":0,"
                          "\"block\":0,\"pcsr_v\":0,\"pcsr_s\":0,\"pcsr_bound\":0,\"pcsr_group\":0,\"rp64\":0.5}",
                          -1, &v));
    SDT_STATUS(sdi_spmm_config_from_json(&v, &c), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "warps") != NULL, "names the field: %s", sd_last_error());
    sdi_error_clear();
    sdi_jvalue_free(&v);
}

int main(void)
{
    sdt_init("test_plan_json");
    SDT_RUN(test_spmv);
    SDT_RUN(test_spmm);
    SDT_RUN(test_spgemm);
    SDT_RUN(test_record);
    SDT_RUN(test_record_refused);
    return sdt_finish();
}
