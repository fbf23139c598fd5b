/* tests/cpu/test_candidate_vo.c: which plans instantiate a label of the template vocabulary
 * V_o (docs/ARCHITECTURE.md "Template vocabulary V_o") as they stand, and which are
 * "outside V_o" — the classification the benchmark suite reports for the tasks our plans
 * win, read through each family's vo_label hook (sdi_candidate_vo_label). Every label
 * returned must be one the ranking knows for that operator; cuSPARSE variants and agent
 * kernels are no plans of ours. */
#include "analysis/analysis.h"
#include "gen/gen.h"
#include "model/rank.h"
#include "sdt.h"
#include "tune/candidate.h"

/* The labels the ranking ranks for op (the vocabulary itself). */
static bool in_vocabulary(sd_op op, const char *label)
{
    sd_csr a;
    memset(&a, 0, sizeof a);
    sd_features f;
    sdi_ranking r;
    bool found = false;
    if (sdi_gen("uniform:rows=200,deg=4", 3, &a) == SD_OK && sdi_analyze(&a, op, &f) == SD_OK &&
        sdi_rank(&f, op, op == SD_OP_SPMM ? 32 : 1, &r) == SD_OK)
        for (int i = 0; i < r.n; i++)
            found |= strcmp(r.e[i].label, label) == 0;
    sd_csr_free(&a);
    return found;
}

/* A candidate of family `name` of op, its parameters zero but the family's id. */
static sdi_candidate cand_of(sd_op op, const char *name)
{
    sdi_candidate c;
    memset(&c, 0, sizeof c);
    c.kind = SDI_CAND_PLAN;
    c.op = op;
    c.k = op == SD_OP_SPMM ? 32 : 1;
    c.plan.op = op;
    c.plan.k = c.k;
    c.plan.family = sdi_family_find(op, name);
    SDT_CHECK(c.plan.family >= 0, "family %d.%s in the table", (int)op, name);
    const sdi_family *f = sdi_family_at(c.plan.family);
    if (f != NULL) {
        if (op == SD_OP_SPMV)
            c.plan.p.spmv.family = f->id;
        else if (op == SD_OP_SPMM)
            c.plan.p.spmm.tmpl = f->id;
        else
            c.plan.p.spgemm.family = f->id;
    }
    return c;
}

static void expect(const sdi_candidate *c, const char *want, const char *what)
{
    char buf[32];
    const char *got = sdi_candidate_vo_label(c, buf, sizeof buf) ? buf : NULL;
    if (want == NULL) {
        SDT_CHECK(got == NULL && buf[0] == '\0', "%s: outside V_o, got '%s'", what, got ? got : buf);
    } else {
        SDT_CHECK(got != NULL && strcmp(got, want) == 0, "%s: '%s', got '%s'", what, want, got ? got : "(outside)");
        SDT_CHECK(in_vocabulary(c->op, want), "%s: '%s' is a label the ranking knows", what, want);
    }
}

static void test_spmv(void)
{
    sdi_candidate c = cand_of(SD_OP_SPMV, "csr_vec");
    expect(&c, "csr", "csr_vec");
    c.plan.p.spmv.colc = 1;
    expect(&c, NULL, "csr_vec with 16-bit column deltas");
    c = cand_of(SD_OP_SPMV, "sell");
    int cs[] = {16, 32, 512, 64, 8};
    for (int i = 0; i < 5; i++) {
        c.plan.p.spmv.c = cs[i];
        char want[16];
        snprintf(want, sizeof want, "sell%d", cs[i]);
        expect(&c, i < 3 ? want : NULL, want);
    }
    c = cand_of(SD_OP_SPMV, "bsr");
    c.plan.p.spmv.b = 8;
    expect(&c, "bsr8", "bsr8");
    c.plan.p.spmv.b = 2;
    expect(&c, NULL, "bsr2");
    const char *outside[] = {"merge", "csr_adaptive", "tiny", "ell", "dia"};
    for (int i = 0; i < 5; i++) {
        c = cand_of(SD_OP_SPMV, outside[i]);
        expect(&c, NULL, outside[i]);
    }
    c = cand_of(SD_OP_SPMV, "coo");
    expect(&c, "coo", "coo");
    c = cand_of(SD_OP_SPMV, "tiles16");
    expect(&c, "tiles16", "tiles16");
}

static void test_spmm_spgemm_vendor(void)
{
    sdi_candidate c = cand_of(SD_OP_SPMM, "csr_row");
    expect(&c, "csr", "csr_row");
    c = cand_of(SD_OP_SPMM, "bell");
    c.plan.p.spmm.block = 32;
    expect(&c, "bell32", "bell32");
    c.plan.p.spmm.block = 8;
    expect(&c, NULL, "bell8");
    c = cand_of(SD_OP_SPMM, "bsr");
    c.plan.p.spmm.block = 16;
    expect(&c, "bsr16", "bsr16");
    c = cand_of(SD_OP_SPMM, "bsr_tc");
    expect(&c, "tc", "bsr_tc");
    const char *outside[] = {"pcsr", "csr_split", "csr_window", "col_window"};
    for (int i = 0; i < 4; i++) {
        c = cand_of(SD_OP_SPMM, outside[i]);
        expect(&c, NULL, outside[i]);
    }
    const char *sg[] = {"csr_hash", "smem_tiled_hash", "hybrid"};
    for (int i = 0; i < 3; i++) {
        c = cand_of(SD_OP_SPGEMM, sg[i]);
        expect(&c, sg[i], sg[i]);
    }
    c = cand_of(SD_OP_SPGEMM, "dense_stripe");
    expect(&c, NULL, "dense_stripe");
    memset(&c, 0, sizeof c);
    c.kind = SDI_CAND_VENDOR;
    c.op = SD_OP_SPMV;
    snprintf(c.vendor_name, sizeof c.vendor_name, "csr_alg1");
    expect(&c, NULL, "cuSPARSE");
    c.kind = SDI_CAND_AGENT;
    expect(&c, NULL, "agent kernel");
}

/* Labels and properties of the candidate kinds (candidate.c). */
static void test_labels(void)
{
    char buf[SDI_PLAN_TEXT];
    sdi_candidate c = cand_of(SD_OP_SPMV, "merge");
    sdi_candidate_family(&c, buf, sizeof buf);
    SDT_CHECK(strcmp(buf, "spmv.merge") == 0, "plan label %s", buf);
    c = cand_of(SD_OP_SPGEMM, "hybrid");
    sdi_candidate_family(&c, buf, sizeof buf);
    SDT_CHECK(strcmp(buf, "spgemm.hybrid") == 0, "plan label %s", buf);
    sdi_candidate v;
    memset(&v, 0, sizeof v);
    v.kind = SDI_CAND_VENDOR;
    v.op = SD_OP_SPMV;
    snprintf(v.vendor_name, sizeof v.vendor_name, "csr_alg2");
    sdi_candidate_family(&v, buf, sizeof buf);
    SDT_CHECK(strcmp(buf, "cusparse.csr_alg2") == 0, "vendor label %s", buf);
    sdi_candidate_describe(&v, buf, sizeof buf);
    SDT_CHECK(strcmp(buf, "cusparse csr_alg2") == 0, "vendor description %s", buf);
    SDT_CHECK(!sdi_candidate_uses_atomics(&v), "csr_alg2 is reproducible");
    snprintf(v.vendor_name, sizeof v.vendor_name, "csr_alg1");
    SDT_CHECK(sdi_candidate_uses_atomics(&v), "csr_alg1 is not");
    v.op = SD_OP_SPGEMM;
    SDT_CHECK(!sdi_candidate_uses_atomics(&v), "cuSPARSE's SpGEMM algorithms are reproducible");
    sdi_candidate g;
    memset(&g, 0, sizeof g);
    g.kind = SDI_CAND_AGENT;
    g.op = SD_OP_SPMV;
    sdi_candidate_family(&g, buf, sizeof buf);
    SDT_CHECK(strcmp(buf, "agent") == 0, "agent label %s", buf);
    SDT_CHECK(sdi_candidate_uses_atomics(&g), "foreign code is never called reproducible");
    /* the same candidate: kind and plan bytes, or the name */
    sdi_candidate a1 = cand_of(SD_OP_SPMV, "merge"), a2 = a1;
    SDT_CHECK(sdi_candidate_same(&a1, &a2), "equal plans");
    a2.plan.p.spmv.b = 7;
    SDT_CHECK(!sdi_candidate_same(&a1, &a2), "plans differing in one field");
    SDT_CHECK(!sdi_candidate_same(&a1, &v), "a plan and a vendor variant");
    /* the arch of a plan's request: SpMV names the context's, SpMM leaves it to the JIT */
    sd_context ctx;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.arch, sizeof ctx.arch, "sm_90");
    SDT_CHECK(sdi_exe_arch(&ctx, SD_OP_SPMV) != NULL &&
                  strcmp(sdi_exe_arch(&ctx, SD_OP_SPMV), "sm_90") == 0 &&
                  sdi_exe_arch(&ctx, SD_OP_SPMM) == NULL,
              "request arch");
}

int main(void)
{
    sdt_init("test_candidate_vo");
    SDT_RUN(test_spmv);
    SDT_RUN(test_spmm_spgemm_vendor);
    SDT_RUN(test_labels);
    return sdt_finish();
}
