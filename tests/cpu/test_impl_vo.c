/* tests/cpu/test_impl_vo.c: which plans instantiate a label of the template vocabulary
 * V_o (docs/ARCHITECTURE.md "Template vocabulary V_o") as they stand, and which are
 * "outside V_o" — the classification the
 * benchmark suite reports for the tasks our plans win. Every label returned must be one
 * the ranking knows for that operator. */
#include "analysis/analysis.h"
#include "gen/gen.h"
#include "model/rank.h"
#include "sdt.h"
#include "tune/impl.h"

/* The labels the ranking ranks for op (the vocabulary itself). */
static bool in_vocabulary(sd_op op, const char *label)
{
    sd_csr a;
    memset(&a, 0, sizeof a);
    sd_features f;
    sdi_ranking r;
    bool found = false;
    if (sdi_gen("uniform:rows=200,deg=4", 3, &a) == SD_OK && sd_analyze(&a, op, &f) == SD_OK &&
        sdi_rank(&f, op, op == SD_OP_SPMM ? 32 : 1, &r) == SD_OK)
        for (int i = 0; i < r.n; i++)
            found |= strcmp(r.e[i].label, label) == 0;
    sd_csr_free(&a);
    return found;
}

static const char *label_of(const sdi_impl *im)
{
    static char buf[32];
    return sdi_impl_vo_label(im, buf, sizeof buf) ? buf : NULL;
}

static void expect(const sdi_impl *im, const char *want, const char *what)
{
    const char *got = label_of(im);
    if (want == NULL) {
        SDT_CHECK(got == NULL, "%s: outside V_o, got '%s'", what, got ? got : "");
    } else {
        SDT_CHECK(got != NULL && strcmp(got, want) == 0, "%s: '%s', got '%s'", what, want, got ? got : "(outside)");
        SDT_CHECK(in_vocabulary(im->op, want), "%s: '%s' is a label the ranking knows", what, want);
    }
}

static void test_spmv(void)
{
    sdi_impl im;
    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_SPMV;
    im.op = SD_OP_SPMV;
    im.k = 1;
    im.spmv_cfg.family = SDI_SPMV_CSR_VEC;
    expect(&im, "csr", "csr_vec");
    im.spmv_cfg.colc = 1;
    expect(&im, NULL, "csr_vec with 16-bit column deltas");
    memset(&im.spmv_cfg, 0, sizeof im.spmv_cfg);
    im.spmv_cfg.family = SDI_SPMV_SELL;
    int cs[] = {16, 32, 512, 64, 8};
    for (int i = 0; i < 5; i++) {
        im.spmv_cfg.c = cs[i];
        char want[16];
        snprintf(want, sizeof want, "sell%d", cs[i]);
        expect(&im, i < 3 ? want : NULL, want);
    }
    memset(&im.spmv_cfg, 0, sizeof im.spmv_cfg);
    im.spmv_cfg.family = SDI_SPMV_BSR;
    im.spmv_cfg.b = 8;
    expect(&im, "bsr8", "bsr8");
    im.spmv_cfg.b = 2;
    expect(&im, NULL, "bsr2");
    int outside[] = {SDI_SPMV_MERGE, SDI_SPMV_CSR_ADAPTIVE, SDI_SPMV_TINY, SDI_SPMV_ELL, SDI_SPMV_DIA};
    for (int i = 0; i < 5; i++) {
        memset(&im.spmv_cfg, 0, sizeof im.spmv_cfg);
        im.spmv_cfg.family = outside[i];
        expect(&im, NULL, sdi_spmv_family_name(outside[i]));
    }
    im.spmv_cfg.family = SDI_SPMV_COO;
    expect(&im, "coo", "coo");
    im.spmv_cfg.family = SDI_SPMV_TILES16;
    expect(&im, "tiles16", "tiles16");
}

static void test_spmm_spgemm_vendor(void)
{
    sdi_impl im;
    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_SPMM;
    im.op = SD_OP_SPMM;
    im.k = 32;
    im.spmm_cfg.tmpl = SDI_SPMM_CSR_ROW;
    expect(&im, "csr", "csr_row");
    im.spmm_cfg.tmpl = SDI_SPMM_BELL;
    im.spmm_cfg.block = 32;
    expect(&im, "bell32", "bell32");
    im.spmm_cfg.block = 8;
    expect(&im, NULL, "bell8");
    im.spmm_cfg.tmpl = SDI_SPMM_BSR;
    im.spmm_cfg.block = 16;
    expect(&im, "bsr16", "bsr16");
    im.spmm_cfg.tmpl = SDI_SPMM_BSR_TC;
    expect(&im, "tc", "bsr_tc");
    int outside[] = {SDI_SPMM_PCSR, SDI_SPMM_CSR_SPLIT, SDI_SPMM_CSR_WINDOW, SDI_SPMM_COL_WINDOW};
    for (int i = 0; i < 4; i++) {
        memset(&im.spmm_cfg, 0, sizeof im.spmm_cfg);
        im.spmm_cfg.tmpl = outside[i];
        expect(&im, NULL, sdi_spmm_template_name(outside[i]));
    }
    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_SPGEMM;
    im.op = SD_OP_SPGEMM;
    for (int f = SDI_SPGEMM_HASH; f <= SDI_SPGEMM_HYBRID; f++) {
        im.spgemm_cfg.family = f;
        expect(&im, sdi_spgemm_family_name(f), sdi_spgemm_family_name(f));
    }
    im.spgemm_cfg.family = SDI_SPGEMM_DENSE;
    expect(&im, NULL, "dense_stripe");
    memset(&im, 0, sizeof im);
    im.kind = SDI_IMPL_VENDOR;
    im.op = SD_OP_SPMV;
    snprintf(im.vendor_name, sizeof im.vendor_name, "csr_alg1");
    expect(&im, NULL, "cuSPARSE");
    im.kind = SDI_IMPL_AGENT;
    expect(&im, NULL, "agent kernel");
}

int main(void)
{
    sdt_init("test_impl_vo");
    SDT_RUN(test_spmv);
    SDT_RUN(test_spmm_spgemm_vendor);
    return sdt_finish();
}
