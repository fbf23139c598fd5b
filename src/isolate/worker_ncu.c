/* src/isolate/worker_ncu.c: profile-guided refinement: one candidate run under Nsight
 * Compute (ncu --csv, clocks not locked so times stay comparable with the measurement),
 * its counters parsed into a diagnosis (DRAM bytes, L1/L2 hit rates, occupancy, the
 * largest warp-stall reasons) that the tuner logs and the agent's next prompt quotes. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* Stall reasons: cycles a warp spends stalled per issued instruction (WarpStateStats). */
static const char *const stall_reasons[] = {"long_scoreboard", "short_scoreboard", "lg_throttle",
                                            "mio_throttle",    "barrier",          "math_pipe_throttle",
                                            "wait",            "not_selected"};
#define NSTALLS ((int)(sizeof stall_reasons / sizeof stall_reasons[0]))
#define STALL_PREFIX "smsp__average_warps_issue_stalled_"
#define STALL_SUFFIX "_per_issue_active.ratio"
_Static_assert(NSTALLS == SDI_NCU_NSTALLS, "sdi_ncu_memory.stall holds every stall reason");

const char *sdi_ncu_metrics(void)
{
    static char list[1024];
    if (list[0] == '\0') {
        size_t n = (size_t)snprintf(list, sizeof list,
                                    "dram__bytes_read.sum,lts__t_sector_hit_rate.pct,"
                                    "l1tex__t_sector_hit_rate.pct,"
                                    "sm__warps_active.avg.pct_of_peak_sustained_active");
        for (int i = 0; i < NSTALLS && n < sizeof list; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, ",%s%s%s", STALL_PREFIX, stall_reasons[i],
                                  STALL_SUFFIX);
    }
    return list;
}

/* Splits one CSV line (quoted fields, "" escapes) into at most max fields in place. */
static int csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    while (*p && n < max) {
        char *out = p, *start = p;
        if (*p == '"') {
            p++;
            start = out = p;
            while (*p) {
                if (p[0] == '"' && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            }
            while (*p && *p != ',')
                p++;
        } else {
            while (*p && *p != ',' && *p != '\r' && *p != '\n')
                out = ++p;
        }
        fields[n++] = start;
        if (*p == ',') {
            *out = '\0';
            p++;
        } else {
            *out = '\0';
            break;
        }
    }
    return n;
}

/* "1,234.5" (ncu's thousands separators) → 1234.5; 0 with *ok = false when not a number. */
static double parse_num(const char *s, bool *ok)
{
    char buf[64];
    size_t n = 0;
    for (; *s && n + 1 < sizeof buf; s++)
        if (*s != ',' && !isspace((unsigned char)*s))
            buf[n++] = *s;
    buf[n] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end);
    *ok = n > 0 && end != NULL && *end == '\0';
    return *ok ? v : 0;
}

/* The factor that turns a value in `unit` into bytes or seconds (1 for other units). */
static double unit_scale(const char *unit)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"Kbyte", 1e3},    {"KB", 1e3},    {"Mbyte", 1e6},   {"MB", 1e6},   {"Gbyte", 1e9},
                 {"GB", 1e9},       {"Tbyte", 1e12}, {"TB", 1e12},    {"nsecond", 1e-9}, {"ns", 1e-9},
                 {"usecond", 1e-6}, {"us", 1e-6},   {"msecond", 1e-3}, {"ms", 1e-3},  {"second", 1},
                 {"s", 1}};
    if (unit == NULL)
        return 1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(unit, units[i].unit) == 0)
            return units[i].scale;
    return 1;
}

static int name_slot(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

sd_status sdi_ncu_parse_metrics(const char *text, const char *const *names, int nnames, double *sums,
                                int *counts, int *kernels_out)
{
    for (int i = 0; i < nnames; i++)
        sums[i] = 0, counts[i] = 0;
    *kernels_out = 0;
    size_t len = strlen(text);
    char *copy = sdi_malloc(len + 1);
    if (copy == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory parsing ncu output");
    memcpy(copy, text, len + 1);
    enum { NONE, LONG_FORM, RAW } form = NONE;
    int c_name = -1, c_unit = -1, c_value = -1, c_kernel = -1;
    int raw_slot[256];
    int nraw = 0;
    bool units_row = false;
    char *fields[256];
    char units[256][16];
    memset(units, 0, sizeof units);
    char last_kernel_id[64] = "";
    int kernels = 0;
    for (char *line = copy, *next; line != NULL && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] != '"')
            continue; /* ==PROF== messages and the profiled program's own output */
        int n = csv_split(line, fields, 256);
        if (form == NONE) {
            for (int i = 0; i < n; i++) {
                if (strcmp(fields[i], "Metric Name") == 0)
                    c_name = i;
                else if (strcmp(fields[i], "Metric Unit") == 0)
                    c_unit = i;
                else if (strcmp(fields[i], "Metric Value") == 0)
                    c_value = i;
                else if (strcmp(fields[i], "ID") == 0)
                    c_kernel = i;
            }
            if (c_name >= 0 && c_value >= 0) {
                form = LONG_FORM;
                continue;
            }
            /* The raw page: one column per metric, a units row, then one row per kernel. */
            for (int i = 0; i < n; i++) {
                raw_slot[i] = name_slot(fields[i], names, nnames);
                if (raw_slot[i] >= 0)
                    form = RAW;
            }
            nraw = n;
            units_row = form == RAW;
            continue;
        }
        if (form == LONG_FORM) {
            if (n <= c_name || n <= c_value)
                continue;
            int slot = name_slot(fields[c_name], names, nnames);
            bool ok;
            double v = parse_num(fields[c_value], &ok);
            if (slot < 0 || !ok)
                continue;
            sums[slot] += v * unit_scale(c_unit >= 0 && c_unit < n ? fields[c_unit] : NULL);
            counts[slot]++;
            if (c_kernel >= 0 && c_kernel < n && strcmp(fields[c_kernel], last_kernel_id) != 0) {
                snprintf(last_kernel_id, sizeof last_kernel_id, "%s", fields[c_kernel]);
                kernels++;
            }
        } else {
            for (int i = 0; i < n && i < nraw; i++) {
                if (units_row) {
                    snprintf(units[i], sizeof units[i], "%s", fields[i]);
                    continue;
                }
                bool ok;
                double v = parse_num(fields[i], &ok);
                if (raw_slot[i] < 0 || !ok)
                    continue;
                sums[raw_slot[i]] += v * unit_scale(units[i]);
                counts[raw_slot[i]]++;
            }
            if (!units_row)
                kernels++;
            units_row = false;
        }
    }
    sdi_free(copy);
    int found = 0;
    for (int i = 0; i < nnames; i++)
        found += counts[i] > 0;
    if (found == 0)
        return SDI_ERR(SD_ERR_PARSE, "ncu output holds none of the requested metrics");
    *kernels_out = kernels;
    return SD_OK;
}

sd_status sdi_ncu_parse_csv(const char *text, sdi_profile_diag *d)
{
    memset(d, 0, sizeof *d);
    /* The slots: dram bytes, L2 hit, L1 hit, warps active, then the stall reasons. */
    char stall_names[NSTALLS][96];
    const char *names[4 + NSTALLS] = {"dram__bytes_read.sum", "lts__t_sector_hit_rate.pct",
                                      "l1tex__t_sector_hit_rate.pct",
                                      "sm__warps_active.avg.pct_of_peak_sustained_active"};
    for (int i = 0; i < NSTALLS; i++) {
        snprintf(stall_names[i], sizeof stall_names[i], "%s%s%s", STALL_PREFIX, stall_reasons[i], STALL_SUFFIX);
        names[4 + i] = stall_names[i];
    }
    double sum[4 + NSTALLS];
    int count[4 + NSTALLS], kernels = 0;
    sd_status s = sdi_ncu_parse_metrics(text, names, 4 + NSTALLS, sum, count, &kernels);
    if (s != SD_OK)
        return s;
    d->available = true;
    d->nkernels = kernels > 0 ? kernels : count[0];
    d->dram_bytes_read = sum[0]; /* bytes add up over the kernels of one execution */
    d->l2_hit_pct = count[1] ? sum[1] / count[1] : 0;
    d->l1_hit_pct = count[2] ? sum[2] / count[2] : 0;
    d->warps_active_pct = count[3] ? sum[3] / count[3] : 0;
    /* The largest stall reasons, largest first. */
    bool used[NSTALLS] = {false};
    for (int r = 0; r < SDI_PROFILE_MAX_STALLS; r++) {
        int best = -1;
        double bv = 0;
        for (int i = 0; i < NSTALLS; i++) {
            double v = count[4 + i] ? sum[4 + i] / count[4 + i] : 0;
            if (!used[i] && count[4 + i] && (best < 0 || v > bv))
                best = i, bv = v;
        }
        if (best < 0)
            break;
        used[best] = true;
        snprintf(d->stall_name[d->nstalls], sizeof d->stall_name[0], "%s", stall_reasons[best]);
        d->stall_value[d->nstalls++] = bv;
    }
    return SD_OK;
}

/* Raw sectors and hits pool the hit rates over launches; the .pct forms are the
 * fallback where a GPU lacks the raw counters. Then the warp instructions executed and the
 * stall reasons (cycles stalled per issued instruction), which say what a kernel waits on. */
static const char *const mem_fixed[] = {
    "l1tex__t_sector_hit_rate.pct", "l1tex__t_sectors.sum",    "l1tex__t_sector_hits.sum",
    "l1tex__t_requests.sum",        "lts__t_sector_hit_rate.pct", "lts__t_sectors.sum",
    "lts__t_sector_hits.sum",       "lts__t_requests.sum",     "dram__bytes_read.sum",
    "dram__bytes_write.sum",        "sm__warps_active.avg.pct_of_peak_sustained_active",
    "gpu__time_duration.sum",       "smsp__inst_executed.sum"};
enum { M_L1PCT, M_L1SEC, M_L1HIT, M_L1REQ, M_L2PCT, M_L2SEC, M_L2HIT, M_L2REQ, M_DRAMR, M_DRAMW, M_OCC, M_TIME,
       M_INST, M_STALL0, M_COUNT = M_STALL0 + NSTALLS };
static const char *mem_metrics[M_COUNT];
static char mem_stall_names[NSTALLS][96];
static char mem_list[2048];
static pthread_once_t mem_once = PTHREAD_ONCE_INIT;

static void mem_metrics_build(void)
{
    for (int i = 0; i < M_STALL0; i++)
        mem_metrics[i] = mem_fixed[i];
    for (int i = 0; i < NSTALLS; i++) {
        snprintf(mem_stall_names[i], sizeof mem_stall_names[i], "%s%s%s", STALL_PREFIX, stall_reasons[i],
                 STALL_SUFFIX);
        mem_metrics[M_STALL0 + i] = mem_stall_names[i];
    }
    size_t n = 0;
    for (int i = 0; i < M_COUNT && n < sizeof mem_list; i++)
        n += (size_t)snprintf(mem_list + n, sizeof mem_list - n, "%s%s", i ? "," : "", mem_metrics[i]);
}

const char *sdi_ncu_memory_metrics(void)
{
    pthread_once(&mem_once, mem_metrics_build);
    return mem_list;
}

int sdi_ncu_stall_count(void) { return NSTALLS; }

const char *sdi_ncu_stall_reason(int i) { return i >= 0 && i < NSTALLS ? stall_reasons[i] : NULL; }

/* Adds one launch's values (cur, where has) weighted by its cur[wslot] to num / den, and
 * clears has for the next launch. */
static void flush_weighted(const double *cur, bool *has, int nnames, int wslot, double *num, double *den)
{
    if (has[wslot] && cur[wslot] > 0)
        for (int i = 0; i < nnames; i++)
            if (has[i] && i != wslot) {
                num[i] += cur[i] * cur[wslot];
                den[i] += cur[wslot];
            }
    memset(has, 0, (size_t)nnames * sizeof *has);
}

/* Means of per-launch ratios weighted by each launch's value of names[wslot] (ncu's long
 * form, rows grouped by kernel ID): sum(value × weight) / sum(weight) over the launches that
 * report both; NaN where none does (or in the raw page, which the caller then averages). */
static void parse_weighted(const char *text, const char *const *names, int nnames, int wslot, double *out)
{
    for (int i = 0; i < nnames; i++)
        out[i] = NAN;
    size_t len = strlen(text);
    char *copy = sdi_malloc(len + 1);
    double *num = sdi_calloc((size_t)nnames * 3 + 1, sizeof *num);
    bool *has = sdi_calloc((size_t)nnames + 1, sizeof *has);
    if (copy == NULL || num == NULL || has == NULL) {
        sdi_free(copy);
        sdi_free(num);
        sdi_free(has);
        return; /* the weighted means stay NaN: the caller falls back to plain means */
    }
    double *den = num + nnames, *cur = num + 2 * nnames;
    memcpy(copy, text, len + 1);
    int c_name = -1, c_value = -1, c_kernel = -1;
    char kernel[64] = "";
    char *fields[256];
    for (char *line = copy, *next; line != NULL && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] != '"')
            continue;
        int n = csv_split(line, fields, 256);
        if (c_name < 0) {
            for (int i = 0; i < n; i++) {
                if (strcmp(fields[i], "Metric Name") == 0)
                    c_name = i;
                else if (strcmp(fields[i], "Metric Value") == 0)
                    c_value = i;
                else if (strcmp(fields[i], "ID") == 0)
                    c_kernel = i;
            }
            if (c_name < 0 || c_value < 0 || c_kernel < 0)
                break; /* not the long form */
            continue;
        }
        if (n <= c_name || n <= c_value || n <= c_kernel)
            continue;
        if (strcmp(fields[c_kernel], kernel) != 0) { /* a new launch: the last one is whole */
            flush_weighted(cur, has, nnames, wslot, num, den);
            snprintf(kernel, sizeof kernel, "%s", fields[c_kernel]);
        }
        int slot = name_slot(fields[c_name], names, nnames);
        bool ok;
        double v = parse_num(fields[c_value], &ok);
        if (slot >= 0 && ok)
            cur[slot] = v, has[slot] = true;
    }
    flush_weighted(cur, has, nnames, wslot, num, den);
    for (int i = 0; i < nnames; i++)
        if (den[i] > 0)
            out[i] = num[i] / den[i];
    sdi_free(copy);
    sdi_free(num);
    sdi_free(has);
}

sd_status sdi_ncu_parse_memory(const char *text, int runs, sdi_ncu_memory *m)
{
    memset(m, 0, sizeof *m);
    if (runs < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_ncu_parse_memory: runs %d < 1", runs);
    pthread_once(&mem_once, mem_metrics_build);
    double sum[M_COUNT];
    int count[M_COUNT], kernels = 0;
    sd_status s = sdi_ncu_parse_metrics(text, mem_metrics, M_COUNT, sum, count, &kernels);
    if (s != SD_OK)
        return s;
    m->launches = (kernels + runs - 1) / runs;
    /* Pooled from raw sectors only where every launch reported both counters (ncu prints
     * "n/a" for a counter a GPU lacks); else the mean of the per-launch rates. */
    bool l1_raw = count[M_L1HIT] > 0 && count[M_L1HIT] == count[M_L1SEC] && sum[M_L1SEC] > 0;
    bool l2_raw = count[M_L2HIT] > 0 && count[M_L2HIT] == count[M_L2SEC] && sum[M_L2SEC] > 0;
    m->l1_hit_pct = l1_raw ? 100 * sum[M_L1HIT] / sum[M_L1SEC] : count[M_L1PCT] ? sum[M_L1PCT] / count[M_L1PCT] : NAN;
    m->l2_hit_pct = l2_raw ? 100 * sum[M_L2HIT] / sum[M_L2SEC] : count[M_L2PCT] ? sum[M_L2PCT] / count[M_L2PCT] : NAN;
    m->l1_requests = count[M_L1REQ] ? sum[M_L1REQ] / runs : NAN;
    m->l2_requests = count[M_L2REQ] ? sum[M_L2REQ] / runs : NAN;
    m->dram_read = count[M_DRAMR] ? sum[M_DRAMR] / runs : NAN;
    m->dram_write = count[M_DRAMW] ? sum[M_DRAMW] / runs : NAN;
    m->occupancy_pct = count[M_OCC] ? sum[M_OCC] / count[M_OCC] : NAN;
    m->gpu_us = count[M_TIME] ? sum[M_TIME] / runs * 1e6 : NAN;
    double bytes = (count[M_DRAMR] ? sum[M_DRAMR] : 0) + (count[M_DRAMW] ? sum[M_DRAMW] : 0);
    m->dram_bw = count[M_TIME] && sum[M_TIME] > 0 ? bytes / sum[M_TIME] : NAN;
    m->inst_executed = count[M_INST] ? sum[M_INST] / runs : NAN;
    /* Stall ratios: weighted by each launch's instructions (a short zeroing launch beside
     * the main kernel counts for little), else the mean over launches. */
    double w[M_COUNT];
    parse_weighted(text, mem_metrics, M_COUNT, M_INST, w);
    for (int i = 0; i < NSTALLS; i++) {
        const int k = M_STALL0 + i;
        m->stall[i] = !isnan(w[k]) ? w[k] : count[k] ? sum[k] / count[k] : NAN;
    }
    return SD_OK;
}

void sdi_profile_diag_text(const sdi_profile_diag *d, char *out, size_t cap)
{
    if (cap == 0)
        return;
    if (!d->available) {
        snprintf(out, cap, "no profile (%s)", d->why[0] ? d->why : "not run");
        return;
    }
    size_t n = (size_t)snprintf(out, cap,
                                "ncu over %d kernel launch(es): DRAM read %.3f MB, L2 hit %.1f %%, L1 hit "
                                "%.1f %%, warps active %.1f %% of peak",
                                d->nkernels, d->dram_bytes_read / 1e6, d->l2_hit_pct, d->l1_hit_pct,
                                d->warps_active_pct);
    if (d->nstalls > 0 && n < cap) {
        n += (size_t)snprintf(out + n, cap - n, "; stalls (cycles per issued instruction):");
        for (int i = 0; i < d->nstalls && n < cap; i++)
            n += (size_t)snprintf(out + n, cap - n, " %s %.2f", d->stall_name[i], d->stall_value[i]);
    }
    /* What the counters suggest (rules of thumb for a streaming sparse kernel). */
    const char *hint = NULL;
    if (d->nstalls > 0 && strcmp(d->stall_name[0], "long_scoreboard") == 0)
        hint = "memory-latency bound: keep more independent loads in flight (more rows or nonzeros "
               "per warp, unrolling, vector loads)";
    else if (d->nstalls > 0 && strcmp(d->stall_name[0], "lg_throttle") == 0)
        hint = "too many narrow global accesses: vectorize loads (float4/int4) or stage through shared memory";
    else if (d->nstalls > 0 && strcmp(d->stall_name[0], "barrier") == 0)
        hint = "threads wait at barriers: balance the work inside a CTA or use warp-level reductions";
    else if (d->nstalls > 0 && strcmp(d->stall_name[0], "mio_throttle") == 0)
        hint = "shared-memory or special-instruction pressure: fewer shared accesses or shuffles";
    else if (d->warps_active_pct > 0 && d->warps_active_pct < 40)
        hint = "low occupancy: more CTAs or fewer registers / shared memory per CTA";
    if (hint != NULL && n < cap)
        snprintf(out + n, cap - n, ". Suggests: %s.", hint);
}

void sdi_ncu_profile(const char *worker_exe, const char *request_path, const char *dir, double timeout_s,
                     sdi_profile_diag *d)
{
    memset(d, 0, sizeof *d);
    const char *ncu = sdi_config_get()->ncu;
    char csv[1100], log[1100], reply[1100];
    snprintf(csv, sizeof csv, "%s/ncu.csv", dir);
    snprintf(log, sizeof log, "%s/ncu.log", dir);
    snprintf(reply, sizeof reply, "%s/ncu_reply.json", dir);
    char *argv[] = {(char *)ncu, (char *)"--csv", (char *)"--clock-control", (char *)"none",
                    (char *)"--launch-count", (char *)"16", (char *)"--metrics", (char *)sdi_ncu_metrics(),
                    (char *)"--log-file", csv, (char *)worker_exe, (char *)"worker", (char *)"--once",
                    (char *)request_path, (char *)"--out", reply, NULL};
    int code = -1;
    if (sdi_subprocess_run(argv, log, timeout_s, &code) != SD_OK) {
        snprintf(d->why, sizeof d->why, "ncu not available: %s", sd_last_error());
        sdi_error_clear();
        sdi_log(1, "profile skipped: %s", d->why);
        return;
    }
    if (code != 0) {
        char tail[200];
        sdi_file_tail(log, 160, tail, sizeof tail);
        snprintf(d->why, sizeof d->why, "ncu %s: %s", code < 0 ? "timed out" : "failed", tail);
        sdi_log(1, "profile skipped: %s", d->why);
        return;
    }
    FILE *f = fopen(csv, "rb");
    char *text = NULL;
    long size = 0;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        text = sdi_malloc((size_t)size + 1);
    if (text != NULL) {
        size_t n = fread(text, 1, (size_t)size, f);
        text[n] = '\0';
        if (sdi_ncu_parse_csv(text, d) != SD_OK) {
            snprintf(d->why, sizeof d->why, "%s", sd_last_error());
            sdi_error_clear();
        }
    } else {
        snprintf(d->why, sizeof d->why, "no ncu output in '%.200s'", csv);
    }
    if (f != NULL)
        fclose(f);
    sdi_free(text);
}
