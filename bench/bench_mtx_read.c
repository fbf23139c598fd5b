/* bench/bench_mtx_read.c: Matrix Market reading speed (MB of text per second, best of 3,
 * one thread): the largest shared matrix (.mtx.gz as shipped, gzip alone, and the
 * decompressed .mtx), and a generated 50M-entry .mtx in row-major and in column-major
 * order. Writes <out>.json and <out>.md.
 * usage: bench_mtx_read [--nnz N] [--tmp DIR] [--matrices DIR] OUT_BASE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "core/io.h"

#define REPEATS 3

typedef struct {
    char name[96];
    char note[160];
    double text_mb, file_mb;
    long long nnz_stored, nnz;
    double best_s, parse_s, build_s; /* best read; its tokenising and CSR parts */
    double best_cpu_s;               /* process CPU time of the read with the least */
    double mbps, cpu_mbps;
} result;

static result g_res[8];
static int g_nres;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of this process: on a shared machine the wall time also counts the time the
 * scheduler gave to other processes; the read is single-threaded, so CPU time is what
 * one dedicated core would take. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double file_mb(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (double)sb.st_size / 1e6 : 0.0;
}

/* Best of REPEATS reads of path through sd_csr_read's own code path. */
static int time_read(const char *path, const char *name, const char *note)
{
    result *r = &g_res[g_nres];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->note, sizeof r->note, "%s", note);
    r->best_s = r->best_cpu_s = 1e30;
    for (int k = 0; k < REPEATS; k++) {
        sd_csr a;
        sdi_mtx_info in;
        double c0 = cpu_now(), t0 = now();
        sd_status s = sdi_csr_read_info(path, &a, &in);
        double t = now() - t0, c = cpu_now() - c0;
        if (c < r->best_cpu_s)
            r->best_cpu_s = c;
        if (s != SD_OK) {
            fprintf(stderr, "bench_mtx_read: %s\n", sd_last_error());
            return 1;
        }
        if (t < r->best_s) {
            r->best_s = t;
            r->parse_s = in.parse_seconds;
            r->build_s = in.build_seconds;
        }
        r->text_mb = (double)in.text_bytes / 1e6;
        r->nnz_stored = in.nnz_stored;
        r->nnz = in.nnz;
        sd_csr_free(&a);
    }
    r->file_mb = file_mb(path);
    r->mbps = r->text_mb / r->best_s;
    r->cpu_mbps = r->text_mb / r->best_cpu_s;
    printf("%-34s %8.1f MB text  %7.3f s  %7.1f MB/s  (tokenise %.3f s, CSR %.3f s; CPU "
           "%.3f s = %.1f MB/s)\n", r->name, r->text_mb, r->best_s, r->mbps, r->parse_s,
           r->build_s, r->best_cpu_s, r->cpu_mbps);
    fflush(stdout);
    g_nres++;
    return 0;
}

/* gzip alone: inflate the whole file into a buffer that is thrown away (best of 3);
 * also writes the text to out_path when given. */
static int time_gunzip(const char *path, const char *out_path)
{
    result *r = &g_res[g_nres];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "gunzip only");
    snprintf(r->note, sizeof r->note, "zlib gzread of the same file, no parsing");
    r->best_s = r->best_cpu_s = 1e30;
    size_t cap = 16u << 20;
    char *buf = malloc(cap);
    for (int k = 0; k < REPEATS; k++) {
        FILE *out = (k == 0 && out_path) ? fopen(out_path, "wb") : NULL;
        double c0 = cpu_now(), t0 = now();
        gzFile gz = gzopen(path, "rb");
        if (gz == NULL) {
            free(buf);
            return 1;
        }
        gzbuffer(gz, 1u << 18);
        long long total = 0;
        int n;
        while ((n = gzread(gz, buf, (unsigned)cap)) > 0) {
            total += n;
            if (out)
                fwrite(buf, 1, (size_t)n, out);
        }
        gzclose(gz);
        double t = now() - t0, c = cpu_now() - c0;
        if (out) {
            fclose(out);
        } else {
            r->best_s = t < r->best_s ? t : r->best_s;
            r->best_cpu_s = c < r->best_cpu_s ? c : r->best_cpu_s;
        }
        r->text_mb = (double)total / 1e6;
    }
    free(buf);
    r->file_mb = file_mb(path);
    r->mbps = r->text_mb / r->best_s;
    r->cpu_mbps = r->text_mb / r->best_cpu_s;
    printf("%-34s %8.1f MB text  %7.3f s  %7.1f MB/s  (CPU %.3f s = %.1f MB/s)\n", r->name,
           r->text_mb, r->best_s, r->mbps, r->best_cpu_s, r->cpu_mbps);
    g_nres++;
    return 0;
}

/* A seeded random matrix written as Matrix Market text: rows × rows, nnz entries, row
 * lengths uniform in [1, 2·mean−1], sorted distinct columns, values %.9g of uniform
 * floats in (−1, 1). col_major = 1 writes it transposed-order (sorted by column, as
 * SuiteSparse files are), which exercises the scatter path of canonicalisation. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * UINT64_C(2685821657736338717);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int generate(const char *path, long long nnz, int col_major)
{
    int32_t n = (int32_t)(nnz / 25);
    if (n < 1)
        n = 1;
    int mean = (int)(nnz / n);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 1;
    setvbuf(f, NULL, _IOFBF, 1 << 22);
    g_rng = 0x9E3779B97F4A7C15ull;
    /* Count the entries first so that the size line is exact. */
    long long total = 0;
    int32_t *len = malloc((size_t)n * sizeof *len);
    for (int32_t i = 0; i < n; i++) {
        len[i] = 1 + (int32_t)(rnd() % (uint64_t)(2 * mean - 1));
        total += len[i];
    }
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% generated by "
               "bench_mtx_read (seeded)\n%d %d %lld\n", n, n, total);
    int32_t cols[4096];
    char line[96];
    for (int32_t i = 0; i < n; i++) {
        int32_t L = len[i];
        for (int32_t k = 0; k < L; k++)
            cols[k] = (int32_t)(rnd() % (uint64_t)n);
        qsort(cols, (size_t)L, sizeof *cols, cmp_i32);
        for (int32_t k = 0; k < L; k++) {
            if (k > 0 && cols[k] <= cols[k - 1])
                cols[k] = cols[k - 1] + 1 < n ? cols[k - 1] + 1 : cols[k - 1];
            float v = (float)((double)(rnd() >> 11) * 0x1p-52 - 1.0);
            /* the "outer" index comes first in the file's order either way */
            int m = snprintf(line, sizeof line, "%d %d %.9g\n", col_major ? cols[k] + 1 : i + 1,
                             col_major ? i + 1 : cols[k] + 1, (double)v);
            fwrite(line, 1, (size_t)m, f);
        }
    }
    free(len);
    return fclose(f) == 0 ? 0 : 1;
}

static void machine(char *cpu, size_t cap)
{
    snprintf(cpu, cap, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p += 2;
                p[strcspn(p, "\n")] = '\0';
                snprintf(cpu, cap, "%s", p);
            }
            break;
        }
    fclose(f);
}

static void loadavg(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL)
        return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(out, cap, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

static int write_reports(const char *base, const char *date, const char *cpu, long ncpu,
                         const char *largest)
{
    char load[64];
    loadavg(load, sizeof load);
    char path[1024];
    snprintf(path, sizeof path, "%s.json", base);
    sdi_json j;
    sdi_json_init(&j, 2);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "benchmark");
    sdi_json_string(&j, "bench_mtx_read");
    sdi_json_key(&j, "date");
    sdi_json_string(&j, date);
    sdi_json_key(&j, "machine");
    sdi_json_string(&j, cpu);
    sdi_json_key(&j, "online_cores");
    sdi_json_int(&j, ncpu);
    sdi_json_key(&j, "threads_used");
    sdi_json_int(&j, 1);
    sdi_json_key(&j, "load_average_at_end");
    sdi_json_string(&j, load);
    sdi_json_key(&j, "metric");
    sdi_json_string(&j, "MB (10^6 bytes) of Matrix Market text per second of sd_csr_read wall "
                        "time (tokenise + canonical CSR), best of 3, one thread");
    sdi_json_key(&j, "goal_mb_per_s");
    sdi_json_int(&j, 150);
    sdi_json_key(&j, "largest_shared_matrix");
    sdi_json_string(&j, largest);
    sdi_json_key(&j, "results");
    sdi_json_begin_array(&j);
    for (int k = 0; k < g_nres; k++) {
        result *r = &g_res[k];
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "name");
        sdi_json_string(&j, r->name);
        sdi_json_key(&j, "note");
        sdi_json_string(&j, r->note);
        sdi_json_key(&j, "text_mb");
        sdi_json_number(&j, r->text_mb);
        sdi_json_key(&j, "file_mb");
        sdi_json_number(&j, r->file_mb);
        sdi_json_key(&j, "nnz_stored");
        sdi_json_int(&j, r->nnz_stored);
        sdi_json_key(&j, "nnz");
        sdi_json_int(&j, r->nnz);
        sdi_json_key(&j, "best_seconds");
        sdi_json_number(&j, r->best_s);
        sdi_json_key(&j, "tokenise_seconds");
        sdi_json_number(&j, r->parse_s);
        sdi_json_key(&j, "csr_seconds");
        sdi_json_number(&j, r->build_s);
        sdi_json_key(&j, "mb_per_s");
        sdi_json_number(&j, r->mbps);
        sdi_json_key(&j, "cpu_seconds");
        sdi_json_number(&j, r->best_cpu_s);
        sdi_json_key(&j, "mb_per_cpu_s");
        sdi_json_number(&j, r->cpu_mbps);
        sdi_json_end_object(&j);
    }
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    if (sdi_json_finish(&j) != SD_OK)
        return 1;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return 1;
    fprintf(f, "%s\n", j.buf);
    fclose(f);
    sdi_json_free(&j);
    snprintf(path, sizeof path, "%s.md", base);
    f = fopen(path, "w");
    if (f == NULL)
        return 1;
    fprintf(f, "# Matrix Market reading speed\n\n"
               "%s, %s (%ld cores online; one thread used). MB/s = MB of text (10^6 bytes, "
               "decompressed) per second of `sd_csr_read` wall time, tokenising and building "
               "the canonical CSR included, best of %d. Goal: 150 MB/s per core. CPU s is the "
               "process CPU time of the read (what one dedicated core takes; the machine was "
               "shared, load average %s at the end).\n\n"
               "| input | text MB | file MB | stored nnz | best s | tokenise s | CSR s | MB/s "
               "| CPU s | MB/CPU s | note |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
            date, cpu, ncpu, REPEATS, load);
    for (int k = 0; k < g_nres; k++) {
        result *r = &g_res[k];
        fprintf(f, "| %s | %.1f | %.1f | %lld | %.3f | %.3f | %.3f | %.0f | %.3f | %.0f | %s |\n",
                r->name, r->text_mb, r->file_mb, r->nnz_stored, r->best_s, r->parse_s,
                r->build_s, r->mbps, r->best_cpu_s, r->cpu_mbps, r->note);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    long long nnz = 50000000;
    const char *tmp = "/tmp";
    const char *mats = SD_MATRICES_DIR;
    const char *base = NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--nnz") == 0 && a + 1 < argc)
            nnz = atoll(argv[++a]);
        else if (strcmp(argv[a], "--tmp") == 0 && a + 1 < argc)
            tmp = argv[++a];
        else if (strcmp(argv[a], "--matrices") == 0 && a + 1 < argc)
            mats = argv[++a];
        else if (argv[a][0] != '-' && base == NULL)
            base = argv[a];
        else {
            fprintf(stderr, "usage: bench_mtx_read [--nnz N] [--tmp DIR] [--matrices DIR] "
                            "OUT_BASE\n");
            return 2;
        }
    }
    if (base == NULL || nnz < 1) {
        fprintf(stderr, "usage: bench_mtx_read [--nnz N] [--tmp DIR] [--matrices DIR] "
                        "OUT_BASE\n");
        return 2;
    }
    char cpu[256], date[32];
    machine(cpu, sizeof cpu);
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", localtime(&t));
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    /* (a) the largest shared matrix by compressed size */
    char dir[1024], largest[1500] = "", line[4096];
    snprintf(dir, sizeof dir, "%s/suitesparse", mats);
    snprintf(line, sizeof line, "%s/INDEX.tsv", dir);
    FILE *idx = fopen(line, "r");
    double best = -1;
    char best_name[256] = "";
    while (idx && fgets(line, sizeof line, idx)) {
        char name[256];
        if (sscanf(line, "%255s", name) != 1 || strcmp(name, "name") == 0)
            continue;
        char p[1400];
        snprintf(p, sizeof p, "%s/%s.mtx.gz", dir, name);
        double mb = file_mb(p);
        if (mb > best) {
            best = mb;
            snprintf(largest, sizeof largest, "%s", p);
            snprintf(best_name, sizeof best_name, "%s", name);
        }
    }
    if (idx)
        fclose(idx);
    char plain[1100], label[160];
    snprintf(plain, sizeof plain, "%s/bench_mtx_read_%ld.mtx", tmp, (long)getpid());
    if (largest[0]) {
        snprintf(label, sizeof label, "%s.mtx.gz", best_name);
        if (time_read(largest, label, "as shipped: gzip + parse"))
            return 1;
        if (time_gunzip(largest, plain))
            return 1;
        snprintf(label, sizeof label, "%s.mtx (decompressed)", best_name);
        if (time_read(plain, label, "pure parse of the same text"))
            return 1;
        unlink(plain);
    } else {
        fprintf(stderr, "bench_mtx_read: no shared matrices under %s; skipping (a)\n", dir);
    }

    /* (b) generated files */
    for (int col_major = 0; col_major < 2; col_major++) {
        printf("generating %lld entries (%s order) in %s ...\n", nnz,
               col_major ? "column-major" : "row-major", plain);
        fflush(stdout);
        if (generate(plain, nnz, col_major)) {
            fprintf(stderr, "bench_mtx_read: cannot write %s\n", plain);
            unlink(plain);
            return 1;
        }
        snprintf(label, sizeof label, "generated %lldM, %s", nnz / 1000000,
                 col_major ? "column-major" : "row-major");
        int rc = time_read(plain, label,
                           col_major ? "sorted by column like SuiteSparse: CSR by scatter"
                                     : "sorted by row like our writer: CSR by copy");
        unlink(plain);
        if (rc)
            return 1;
    }
    return write_reports(base, date, cpu, ncpu, largest);
}
