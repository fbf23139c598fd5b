/* tests/cpu/test_ncu_memory.c: the Nsight Compute counters of `sparseditto profile`
 * (isolate/worker_ncu.c, sdi_ncu_parse_memory) on a recorded-style `ncu --csv` output
 * (tests/data/ncu_memory.csv: 2 executions x 2 launches, mixed units, thousands
 * separators, a kernel name with commas), the raw page's fallback to the .pct metrics,
 * and the failures (no counters, bad run count). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isolate/worker.h"
#include "sdt.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

#define NEAR(a, b) near_((a), (b))
static int near_(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)); }

static void test_recorded(void)
{
    char *text = slurp(SD_TEST_DATA_DIR "/ncu_memory.csv");
    SDT_CHECK(text != NULL, "cannot read the fixture");
    if (text == NULL)
        return;
    sdi_ncu_memory m;
    SDT_OK(sdi_ncu_parse_memory(text, 2, &m));
    SDT_CHECK(m.launches == 2, "launches per execution %d", m.launches);
    /* Per execution: 1.5 MB + 500 KB read, 100 KB + 0 written, 10 us + 5000 ns. */
    SDT_CHECK(NEAR(m.dram_read, 2.0e6) && NEAR(m.dram_write, 1.0e5), "dram %g / %g", m.dram_read, m.dram_write);
    SDT_CHECK(NEAR(m.gpu_us, 15), "time %g us", m.gpu_us);
    /* Pooled hit rates (hits / sectors over every launch), not the mean of the .pct values. */
    SDT_CHECK(NEAR(m.l1_hit_pct, 62.5), "L1 hit %g (pooled 2500 / 4000)", m.l1_hit_pct);
    SDT_CHECK(NEAR(m.l2_hit_pct, 50), "L2 hit %g", m.l2_hit_pct);
    SDT_CHECK(NEAR(m.l1_requests, 1000) && NEAR(m.l2_requests, 2000), "requests %g / %g", m.l1_requests,
              m.l2_requests);
    SDT_CHECK(NEAR(m.occupancy_pct, 40), "occupancy %g", m.occupancy_pct);
    SDT_CHECK(NEAR(m.dram_bw, 2.1e6 / 15e-6), "bandwidth %g", m.dram_bw);
    /* Warp instructions per execution (3,000 + 1,000), and the stall ratios weighted by each
     * launch's instructions: long_scoreboard (10·3000 + 2·1000) / 4000 = 8, not the mean 6;
     * wait (1·3000 + 5·1000) / 4000 = 2, not 3; reasons ncu did not report are NaN. */
    SDT_CHECK(NEAR(m.inst_executed, 4000), "instructions %g", m.inst_executed);
    SDT_CHECK(sdi_ncu_stall_count() == SDI_NCU_NSTALLS && strcmp(sdi_ncu_stall_reason(0), "long_scoreboard") == 0 &&
                  strcmp(sdi_ncu_stall_reason(6), "wait") == 0 && sdi_ncu_stall_reason(SDI_NCU_NSTALLS) == NULL,
              "stall reasons");
    SDT_CHECK(NEAR(m.stall[0], 8) && NEAR(m.stall[6], 2), "weighted stalls %g %g", m.stall[0], m.stall[6]);
    SDT_CHECK(isnan(m.stall[1]) && isnan(m.stall[4]), "unreported stall reasons are NaN");
    /* The search's diagnosis still reads the same output (one parser under both). */
    sdi_profile_diag d;
    SDT_OK(sdi_ncu_parse_csv(text, &d));
    SDT_CHECK(d.nkernels == 4 && NEAR(d.dram_bytes_read, 4.0e6) && NEAR(d.l1_hit_pct, 50), "diagnosis %d %g %g",
              d.nkernels, d.dram_bytes_read, d.l1_hit_pct);
    free(text);
}

static void test_fallback_and_errors(void)
{
    /* The raw page with only the .pct hit rates: their mean, and NaN for what is missing. */
    const char *raw = "\"ID\",\"Kernel Name\",\"lts__t_sector_hit_rate.pct\",\"l1tex__t_sector_hit_rate.pct\","
                      "\"dram__bytes_read.sum\"\n"
                      "\"\",\"\",\"%\",\"%\",\"Gbyte\"\n"
                      "\"0\",\"k\",\"80\",\"10\",\"0.001\"\n"
                      "\"1\",\"k\",\"60\",\"30\",\"0.003\"\n";
    sdi_ncu_memory m;
    SDT_OK(sdi_ncu_parse_memory(raw, 1, &m));
    SDT_CHECK(m.launches == 2 && NEAR(m.l2_hit_pct, 70) && NEAR(m.l1_hit_pct, 20), "fallback %d %g %g",
              m.launches, m.l2_hit_pct, m.l1_hit_pct);
    SDT_CHECK(NEAR(m.dram_read, 4e6) && isnan(m.dram_write) && isnan(m.dram_bw) && isnan(m.l1_requests),
              "missing counters are NaN");
    /* The raw page cannot pair a launch's ratio with its instructions: the stall ratios are
     * the mean over launches there. */
    const char *raw_st = "\"ID\",\"Kernel Name\",\"smsp__inst_executed.sum\","
                         "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\"\n"
                         "\"\",\"\",\"inst\",\"\"\n"
                         "\"0\",\"k\",\"3000\",\"10\"\n"
                         "\"1\",\"k\",\"1000\",\"2\"\n";
    SDT_OK(sdi_ncu_parse_memory(raw_st, 1, &m));
    SDT_CHECK(NEAR(m.inst_executed, 4000) && NEAR(m.stall[0], 6), "raw page stalls %g %g", m.inst_executed,
              m.stall[0]);
    /* Sectors counted but hits "n/a" (a counter this ncu lacks): the .pct mean, not 0 %;
     * short time units ("ns", "us") scale like the long ones. */
    const char *na = "\"ID\",\"Kernel Name\",\"l1tex__t_sectors.sum\",\"l1tex__t_sector_hits.sum\","
                     "\"l1tex__t_sector_hit_rate.pct\",\"gpu__time_duration.sum\"\n"
                     "\"\",\"\",\"sector\",\"sector\",\"%\",\"ns\"\n"
                     "\"0\",\"k\",\"1,000\",\"n/a\",\"25\",\"4,000\"\n"
                     "\"1\",\"k\",\"3,000\",\"n/a\",\"75\",\"6000\"\n";
    SDT_OK(sdi_ncu_parse_memory(na, 2, &m));
    SDT_CHECK(NEAR(m.l1_hit_pct, 50) && NEAR(m.gpu_us, 5), "hits n/a: L1 %g %%, time %g us", m.l1_hit_pct, m.gpu_us);
    SDT_CHECK(strstr(sdi_ncu_memory_metrics(), "lts__t_sector_hits.sum") &&
                  strstr(sdi_ncu_memory_metrics(), "gpu__time_duration.sum") &&
                  strstr(sdi_ncu_memory_metrics(), "smsp__inst_executed.sum") &&
                  strstr(sdi_ncu_memory_metrics(),
                         "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"),
              "metrics list: %s", sdi_ncu_memory_metrics());
    /* ncu without counter access prints an error and no metric rows. */
    SDT_STATUS(sdi_ncu_parse_memory("==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does "
                                    "not have permission to access NVIDIA GPU Performance Counters\n",
                                    3, &m),
               SD_ERR_PARSE);
    SDT_STATUS(sdi_ncu_parse_memory(raw, 0, &m), SD_ERR_INVALID_ARG);
}

int main(void)
{
    sdt_init("test_ncu_memory");
    SDT_RUN(test_recorded);
    SDT_RUN(test_fallback_and_errors);
    return sdt_finish();
}
