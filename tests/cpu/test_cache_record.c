/* tests/cpu/test_cache_record.c: the kernel-cache record of a winner (tune/plan_cache.h).
 * A record of format 2 reads back to the identical candidate (a plan, a cuSPARSE variant,
 * a SpGEMM product's shape); an entry of format 1 — its "impl" record with the operator's
 * configuration struct — or any record this build cannot read is rejected and rebuilt by
 * a search, never misread. No device: a rejected entry is refused before anything is
 * built. */
#include <string.h>

#include "analysis/gpu.h"
#include "gen/gen.h"
#include "sdt.h"
#include "tune/plan_cache.h"

/* The plan JSON of an entry around a record (NULL: none). */
static char *entry_plan(const char *member, const char *record)
{
    size_t n = strlen(member) + (record ? strlen(record) : 4) + 64;
    char *s = malloc(n);
    snprintf(s, n, "{\"family\":\"spmv.csr_vec\",\"%s\":%s}", member, record ? record : "null");
    return s;
}

static void expect_rebuilt(const char *what, const char *plan_json, sd_op op)
{
    sdi_cache_entry e;
    memset(&e, 0, sizeof e);
    e.plan_json = (char *)plan_json;
    e.record_json = "{}";
    sdi_candidate c;
    memset(&c, 0x5a, sizeof c);
    bool used = true;
    /* No context is needed to refuse: nothing is built for an entry that does not read. */
    SDT_OK(sdi_plan_from_entry(NULL, NULL, NULL, op, &e, &c, &used));
    SDT_CHECK(!used, "%s: the entry was used", what);
    SDT_CHECK(c.kind == SDI_CAND_NONE && !c.built, "%s: the candidate is left empty", what);
}

/* What the old format wrote (tune/impl_cache.c, SDI_IMPL_RECORD_FORMAT 1). */
static const char *const format1 =
    "{\"format\":1,\"kind\":\"spmv\",\"op\":\"spmv\",\"k\":1,"
    "\"config\":{\"family\":\"csr_vec\",\"vec\":4,\"rows_per_cta\":8},"
    "\"vendor\":null,\"vendor_plain\":false,\"aat\":0,\"general_b\":false}";

static void test_old_format_rejected(void)
{
    sdi_candidate c;
    int gb = 0;
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(format1, -1, &v));
    SDT_STATUS(sdi_plan_record_read(&v, &c, &gb), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "format 1") != NULL, "names the format: '%s'", sd_last_error());
    sdi_jvalue_free(&v);
    sdi_error_clear();
    /* An entry written by the old build: its record is "impl". */
    char *p = entry_plan("impl", format1);
    expect_rebuilt("a format-1 entry", p, SD_OP_SPMV);
    free(p);
    /* The old record under the new member, a record without a format, and none at all. */
    p = entry_plan("record", format1);
    expect_rebuilt("a format-1 record", p, SD_OP_SPMV);
    free(p);
    p = entry_plan("record", "{\"kind\":\"vendor\",\"op\":\"spmv\",\"k\":1,\"vendor\":\"csr_alg1\",\"aat\":0}");
    expect_rebuilt("a record without a format", p, SD_OP_SPMV);
    free(p);
    p = entry_plan("record", NULL);
    expect_rebuilt("no record", p, SD_OP_SPMV);
    free(p);
    expect_rebuilt("not JSON", "{\"record\":", SD_OP_SPMV);
    /* A record of a later format is not guessed at either. */
    p = entry_plan("record", "{\"format\":3,\"kind\":\"vendor\",\"op\":\"spmv\",\"k\":1,\"vendor\":\"csr_alg1\","
                             "\"aat\":0}");
    expect_rebuilt("a format-3 record", p, SD_OP_SPMV);
    free(p);
    sdi_error_clear();
}

/* Writes c's record and reads it back. */
static void round_trip(const char *what, const sdi_candidate *c, int general_b, sdi_candidate *back, int *gb)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_plan_record_json(c, general_b, &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(strstr(j.buf, "\"format\":2") != NULL, "%s: format 2: %s", what, j.buf);
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(j.buf, -1, &v));
    SDT_OK(sdi_plan_record_read(&v, back, gb));
    sdi_jvalue_free(&v);
    sdi_json_free(&j);
}

static void test_round_trip(void)
{
    sdi_gpu_props gpu;
    SDT_OK(sdi_gpu_profile("H200", &gpu));
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=3000,deg=8,alpha=1.9", 3, &a));
    sdi_spmv_stats vst;
    sdi_spmm_stats mst;
    SDT_OK(sdi_spmv_stats_compute(&a, &vst));
    sdi_spmm_stats_compute(&a, &mst);
    /* Every family's default plan of SpMV and SpMM that applies to the matrix. */
    int plans = 0;
    for (int f = 0; f < sdi_family_count(); f++) {
        const sdi_family *fam = sdi_family_at(f);
        if (fam->op == SD_OP_SPGEMM)
            continue;
        sdi_task t;
        memset(&t, 0, sizeof t);
        t.op = fam->op;
        t.k = fam->op == SD_OP_SPMM ? 32 : 1;
        t.a = &a;
        t.gpu = &gpu;
        t.spmv = &vst;
        t.spmm = &mst;
        sdi_candidate c, back;
        memset(&c, 0, sizeof c);
        c.kind = SDI_CAND_PLAN;
        c.op = t.op;
        c.k = t.k;
        c.sg_aat = -1; /* a search's "no product": never written as a bad aat */
        if (sdi_plan_default(&t, f, &c.plan) != SD_OK) {
            sdi_error_clear();
            continue;
        }
        int gb = 1;
        round_trip(fam->name, &c, 0, &back, &gb);
        SDT_CHECK(back.kind == SDI_CAND_PLAN && back.op == c.op && back.k == c.k && gb == 0,
                  "%s: kind, operator, K", fam->name);
        SDT_CHECK(sdi_plan_equal(&back.plan, &c.plan), "%s: the identical plan", fam->name);
        plans++;
    }
    SDT_CHECK(plans >= 4, "%d default plans", plans);
    /* cuSPARSE: SpMM's variant with plain calls; SpGEMM's algorithm for A·B and A·Aᵀ. */
    sdi_candidate c, back;
    int gb = 0;
    memset(&c, 0, sizeof c);
    c.kind = SDI_CAND_VENDOR;
    c.op = SD_OP_SPMM;
    c.k = 64;
    c.vendor_plain = true;
    snprintf(c.vendor_name, sizeof c.vendor_name, "csr_alg2");
    round_trip("vendor", &c, 0, &back, &gb);
    SDT_CHECK(back.kind == SDI_CAND_VENDOR && back.op == SD_OP_SPMM && back.k == 64 && back.vendor_plain &&
                  strcmp(back.vendor_name, "csr_alg2") == 0,
              "the cuSPARSE variant");
    memset(&c, 0, sizeof c);
    c.kind = SDI_CAND_VENDOR;
    c.op = SD_OP_SPGEMM;
    c.k = 1;
    c.sg_aat = 1;
    snprintf(c.vendor_name, sizeof c.vendor_name, "spgemm_alg1");
    round_trip("spgemm vendor", &c, 0, &back, &gb);
    SDT_CHECK(back.sg_aat == 1 && gb == 0, "A*At");
    c.sg_aat = 0;
    round_trip("spgemm vendor A*B", &c, 1, &back, &gb);
    SDT_CHECK(back.sg_aat == 0 && gb == 1, "A*B");
    /* A record for another operator or product is not this task's. */
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "record");
    sdi_plan_record_json(&c, 1, &j);
    sdi_json_end_object(&j);
    SDT_OK(sdi_json_finish(&j));
    expect_rebuilt("another operator", j.buf, SD_OP_SPMV);
    expect_rebuilt("another product", j.buf, SD_OP_SPGEMM); /* general B: none given */
    sdi_json_free(&j);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_cache_record");
    SDT_RUN(test_old_format_rejected);
    SDT_RUN(test_round_trip);
    return sdt_finish();
}
