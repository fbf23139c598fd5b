/* tools/corpus/corpus_build.c: the corpus builder (corpus_build.h): the list and task
 * parsers and the append-only journal (host only, unit-tested on the CPU), then the
 * measurement of V_o per (matrix, task) with the tuner's building blocks: sdi_candidate for
 * SpMV / SpMM candidates, the SpGEMM executor, the cuSPARSE baseline, sdi_measure's
 * check-then-time protocol. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "corpus.h"
#include "model/forest.h"
#include "model/rank.h"
#include "plan/spgemm.h"
#include "vendor/baseline.h"
#include "corpus_build.h"
#include "tune/candidate.h"

/* ------------------------------------------------------------------ the list */
static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Base name without .mtx / .mtx.gz / .sdm; false when it does not fit out whole. */
static bool base_name(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b != NULL ? b + 1 : path;
    size_t n = strlen(b);
    static const char *const ext[] = {".mtx.gz", ".mtx", ".sdm"};
    for (int i = 0; i < 3; i++)
        if (ends_with(b, ext[i])) {
            n -= strlen(ext[i]);
            break;
        }
    if (n >= cap)
        return false;
    memcpy(out, b, n);
    out[n] = '\0';
    return true;
}

sd_status sdi_corpus_list_parse(const char *text, size_t len, const char *matrices_dir,
                                sdi_corpus_entry **out, int *n)
{
    *out = NULL;
    *n = 0;
    int cap = 0, line = 0;
    sdi_corpus_entry *e = NULL;
    size_t pos = 0;
    while (pos < len) {
        line++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        char buf[1024];
        size_t l = end - pos;
        if (l >= sizeof buf) {
            sdi_free(e);
            *n = 0;
            return SDI_ERR(SD_ERR_PARSE, "line %d: longer than %zu bytes", line, sizeof buf - 1);
        }
        memcpy(buf, text + pos, l);
        buf[l] = '\0';
        pos = end + 1;
        char *p = buf;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        char *q = p;
        while (*q != '\0' && !isspace((unsigned char)*q))
            q++;
        char *rest = q;
        if (*rest != '\0')
            *rest++ = '\0';
        while (isspace((unsigned char)*rest))
            rest++;
        double hint = 0;
        if (*rest != '\0' && *rest != '#') {
            char *stop = NULL;
            if (strncmp(rest, "nnz=", 4) != 0 || (hint = strtod(rest + 4, &stop), stop == rest + 4) ||
                !(hint >= 0 && isfinite(hint)) || (*stop != '\0' && !isspace((unsigned char)*stop))) {
                sdi_free(e);
                *n = 0;
                return SDI_ERR(SD_ERR_PARSE, "line %d: after the entry only \"nnz=N\" may follow "
                               "(got \"%.60s\")", line, rest);
            }
        }
        if (*n == cap) {
            int nc = cap > 0 ? cap * 2 : 64;
            sdi_corpus_entry *ne = sdi_realloc_array(e, (size_t)nc, sizeof *ne);
            if (ne == NULL) {
                sdi_free(e);
                *n = 0;
                return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading the list");
            }
            e = ne;
            cap = nc;
        }
        sdi_corpus_entry *x = &e[*n];
        memset(x, 0, sizeof *x);
        x->line = line;
        x->nnz_hint = hint;
        int too_long = 0;
        if (strchr(p, ':') != NULL) {
            /* A twin without file= reads the shared paper60.tsv; the name stays as written. */
            char table[400];
            snprintf(table, sizeof table, "%s/paper60.tsv", matrices_dir != NULL ? matrices_dir : ".");
            char *spec = sdi_gen_spec_with_table(p, table);
            if (spec == NULL) {
                sdi_free(e);
                *n = 0;
                return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading the list");
            }
            x->kind = SDI_CENTRY_GEN;
            too_long = snprintf(x->text, sizeof x->text, "%s", spec) >= (int)sizeof x->text ||
                       snprintf(x->name, sizeof x->name, "%s", p) >= (int)sizeof x->name;
            sdi_free(spec);
        } else if (strchr(p, '/') != NULL || ends_with(p, ".mtx") || ends_with(p, ".mtx.gz") ||
                   ends_with(p, ".sdm")) {
            x->kind = SDI_CENTRY_FILE;
            too_long = snprintf(x->text, sizeof x->text, "%s", p) >= (int)sizeof x->text ||
                       !base_name(p, x->name, sizeof x->name);
        } else {
            x->kind = SDI_CENTRY_SHARED;
            too_long = snprintf(x->text, sizeof x->text, "%s/suitesparse/%s.mtx.gz",
                                matrices_dir != NULL ? matrices_dir : ".", p) >= (int)sizeof x->text ||
                       snprintf(x->name, sizeof x->name, "%s", p) >= (int)sizeof x->name;
        }
        if (too_long) {
            sdi_free(e);
            *n = 0;
            return SDI_ERR(SD_ERR_PARSE, "line %d: entry or matrix name too long (names < %zu "
                           "bytes)", line, sizeof x->name);
        }
        /* A bad spec fails the whole list now, not hours into a run. */
        sd_status s = x->kind == SDI_CENTRY_GEN ? sdi_gen_check(x->text) : SD_OK;
        if (s != SD_OK) {
            sdi_free(e);
            *n = 0;
            sdi_error_prefix("line %d", line);
            return s;
        }
        (*n)++;
    }
    *out = e;
    return SD_OK;
}

sd_status sdi_corpus_list_read(const char *path, const char *matrices_dir, sdi_corpus_entry **out,
                               int *n)
{
    *out = NULL;
    *n = 0;
    char *buf = NULL;
    size_t len = 0;
    sd_status s = sdi_model_read_file(path, &buf, &len);
    if (s != SD_OK)
        return s;
    s = sdi_corpus_list_parse(buf, len, matrices_dir, out, n);
    sdi_free(buf);
    if (s != SD_OK)
        sdi_error_prefix("%s", path);
    return s;
}

/* ------------------------------------------------------------------ tasks */
sd_status sdi_corpus_ops_parse(const char *text, sdi_corpus_opk *out, int *n)
{
    *n = 0;
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf)
        return SDI_ERR(SD_ERR_INVALID_ARG, "--ops: list too long");
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
        sdi_corpus_opk t = {SD_OP_SPMV, 1};
        if (strcmp(w, "spmv") == 0) {
            t.op = SD_OP_SPMV;
        } else if (strcmp(w, "spgemm") == 0) {
            t.op = SD_OP_SPGEMM;
        } else if (strncmp(w, "spmm", 4) == 0 && w[4] != '\0') {
            char *end = NULL;
            long k = strtol(w + 4, &end, 10);
            if (*end != '\0' || !isdigit((unsigned char)w[4]) || k < 1 || k > 65536)
                return SDI_ERR(SD_ERR_INVALID_ARG, "--ops: '%s': spmm needs K in 1..65536 (spmm32)", w);
            t.op = SD_OP_SPMM;
            t.k = (int)k;
        } else {
            return SDI_ERR(SD_ERR_INVALID_ARG, "--ops: '%s' is not spmv, spmmK (e.g. spmm32) or "
                           "spgemm", w);
        }
        int dup = 0;
        for (int i = 0; i < *n; i++)
            dup |= out[i].op == t.op && out[i].k == t.k;
        if (dup)
            continue;
        if (*n >= SDI_CORPUS_MAX_OPS)
            return SDI_ERR(SD_ERR_INVALID_ARG, "--ops: more than %d tasks", SDI_CORPUS_MAX_OPS);
        out[(*n)++] = t;
    }
    if (*n == 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "--ops: no task");
    return SD_OK;
}

void sdi_corpus_opk_name(sdi_corpus_opk t, char *buf, size_t cap)
{
    if (t.op == SD_OP_SPMM)
        snprintf(buf, cap, "spmm%d", t.k);
    else
        snprintf(buf, cap, "%s", sdi_op_name(t.op));
}

/* ------------------------------------------------------------------ the journal */
static char *task_key(const char *matrix, sd_op op, int k)
{
    size_t n = strlen(matrix) + 32;
    char *s = sdi_malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s\t%s\t%d", matrix, sdi_op_name(op), op == SD_OP_SPMM ? k : 1);
    return s;
}

static sd_status journal_add(sdi_corpus_journal *j, char *key)
{
    if (key == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the corpus journal");
    if (j->n == j->cap) {
        int nc = j->cap > 0 ? j->cap * 2 : 256;
        char **nk = sdi_realloc_array(j->keys, (size_t)nc, sizeof *nk);
        if (nk == NULL) {
            sdi_free(key);
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the corpus journal");
        }
        j->keys = nk;
        j->cap = nc;
    }
    j->keys[j->n++] = key;
    return SD_OK;
}

/* The (matrix, op, k) of a line; 0 when it is not a journal line. */
static int line_task(const char *text, size_t len, char **key)
{
    *key = NULL;
    sdi_jvalue v;
    if (sdi_json_parse(text, (long)len, &v) != SD_OK) {
        sdi_error_clear();
        return 0;
    }
    const char *m = sdi_jget_string(&v, "matrix", NULL);
    int op = sdi_op_from_name(sdi_jget_string(&v, "op", NULL));
    double k = sdi_jget_number(&v, "k", 1);
    if (m != NULL && op >= 0 && k >= 1 && k <= 65536)
        *key = task_key(m, (sd_op)op, (int)k);
    sdi_jvalue_free(&v);
    return m != NULL && op >= 0 && k >= 1 && k <= 65536 ? 1 : 0;
}

void sdi_corpus_journal_close(sdi_corpus_journal *j)
{
    if (j == NULL)
        return;
    if (j->fd >= 0)
        close(j->fd);
    for (int i = 0; i < j->n; i++)
        sdi_free(j->keys[i]);
    sdi_free(j->keys);
    sdi_free(j->path);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}

sd_status sdi_corpus_journal_open(const char *path, sdi_corpus_journal *j)
{
    char *buf = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(buf);                                                                     \
        sdi_corpus_journal_close(j);                                                       \
    } while (0)
    memset(j, 0, sizeof *j);
    j->fd = -1;
    size_t pl = strlen(path) + 1;
    j->path = sdi_malloc(pl);
    SD_CHECK_ALLOC(j->path, "the journal path");
    memcpy(j->path, path, pl);
    j->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (j->fd < 0) {
        sd_status s = SDI_ERR(SD_ERR_IO, "%s: cannot open for appending: %s", path, strerror(errno));
        SD_FREE_ALL;
        return s;
    }
    size_t len = 0;
    SD_TRY(sdi_model_read_file(path, &buf, &len));
    size_t pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && buf[end] != '\n')
            end++;
        int complete = end < len;
        char *key = NULL;
        int ok = line_task(buf + pos, end - pos, &key);
        int blank = 1;
        for (size_t q = pos; q < end && blank; q++)
            blank = isspace((unsigned char)buf[q]) != 0;
        if (ok && key == NULL) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the corpus journal");
        }
        if (!complete) {
            /* The last line has no newline: a crash cut the write short, or the file was
             * edited by hand. Keep it when it is a whole task line, else drop it. */
            if (ok) {
                if (write(j->fd, "\n", 1) != 1) {
                    sdi_free(key);
                    sd_status s = SDI_ERR(SD_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
                    SD_FREE_ALL;
                    return s;
                }
            } else if (!blank) {
                if (ftruncate(j->fd, (off_t)pos) != 0) {
                    sd_status s = SDI_ERR(SD_ERR_IO, "%s: cannot drop the torn last line: %s", path,
                                          strerror(errno));
                    SD_FREE_ALL;
                    return s;
                }
                j->dropped_bytes = (long)(end - pos);
            }
        }
        if (ok) {
            j->lines++;
            SD_TRY(journal_add(j, key));
        } else if (complete && !blank) {
            j->bad_lines++;
        }
        pos = end + 1;
    }
    sdi_free(buf);
    return SD_OK;
#undef SD_FREE_ALL
}

bool sdi_corpus_journal_done(const sdi_corpus_journal *j, const char *matrix, sdi_corpus_opk t)
{
    char key[256];
    snprintf(key, sizeof key, "%s\t%s\t%d", matrix, sdi_op_name(t.op), t.op == SD_OP_SPMM ? t.k : 1);
    for (int i = 0; i < j->n; i++)
        if (strcmp(j->keys[i], key) == 0)
            return true;
    return false;
}

sd_status sdi_corpus_journal_append(sdi_corpus_journal *j, const char *matrix, sdi_corpus_opk t,
                                    const char *line)
{
    if (j->fd < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "corpus journal is not open");
    if (strchr(line, '\n') != NULL)
        return SDI_ERR(SD_ERR_INTERNAL, "corpus line for %s holds a newline", matrix);
    size_t n = strlen(line);
    char *b = sdi_malloc(n + 1);
    if (b == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory writing the corpus");
    memcpy(b, line, n);
    b[n] = '\n';
    /* One write of the whole line: O_APPEND places it at the end; a crash leaves at most
     * a torn last line, which the next open drops. */
    size_t done = 0;
    while (done < n + 1) {
        ssize_t w = write(j->fd, b + done, n + 1 - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            sdi_free(b);
            return SDI_ERR(SD_ERR_IO, "%s: write failed: %s", j->path, strerror(errno));
        }
        done += (size_t)w;
    }
    sdi_free(b);
    if (fsync(j->fd) != 0)
        return SDI_ERR(SD_ERR_IO, "%s: fsync failed: %s", j->path, strerror(errno));
    return journal_add(j, task_key(matrix, t.op, t.k));
}

/* ================================================================== measurement */

#define MAX_CANDS 96
#define MAX_FAMS 6

/* The best of one label. */
typedef struct {
    double us, pipelined_us;
    char family[32], config[SDI_PLAN_TEXT];
    int tried, invalid;
} label_result;

typedef struct {
    int w, f, v, s, group;
    double us;
} pcsr_point;

typedef struct {
    sd_context *ctx;
    const sdi_corpus_build_opts *o;
    const sd_csr *a;
    sdi_corpus_opk t;
    float *d_in, *d_out;
    sdi_reference ref;
    label_result lab[SDI_RANK_MAX_TEMPLATES];
    int npcsr;
    pcsr_point pcsr[128];
    char baseline_variant[48];
    double baseline_us;
    /* configurations measured for an earlier label of this task (spmm csr and coo share
     * csr_split): measured once */
    int nmemo;
    sdi_plan memo[MAX_CANDS];
    sdi_timing memo_t[MAX_CANDS];
    int memo_valid[MAX_CANDS], memo_invalid[MAX_CANDS];
} task_state;

/* ---- candidates of one label */
static int spmv_label_families(const char *label, const sdi_spmv_stats *st, int *fam, int *c, int *b)
{
    int n = 0;
    *c = *b = 0;
    if (strcmp(label, "csr") == 0) {
        if (st->nnz <= 200000)
            fam[n++] = SDI_SPMV_TINY;
        fam[n++] = SDI_SPMV_CSR_VEC;
        fam[n++] = SDI_SPMV_CSR_ADAPTIVE;
        fam[n++] = SDI_SPMV_MERGE;
        if (st->ndiag > 0 && st->ndiag <= 32)
            fam[n++] = SDI_SPMV_DIA;
    } else if (strcmp(label, "coo") == 0) {
        fam[n++] = SDI_SPMV_COO;
    } else if (strncmp(label, "sell", 4) == 0) {
        fam[n++] = SDI_SPMV_SELL;
        *c = atoi(label + 4);
    } else if (strncmp(label, "bsr", 3) == 0) {
        fam[n++] = SDI_SPMV_BSR;
        *b = atoi(label + 3);
    } else if (strcmp(label, "tiles16") == 0) {
        fam[n++] = SDI_SPMV_TILES16;
    }
    return n;
}

static int spmm_label_families(const char *label, const sdi_spmm_stats *st, int *fam, int *b)
{
    int n = 0;
    *b = 0;
    if (strcmp(label, "csr") == 0) {
        if (st->row_cv > 1.0)
            fam[n++] = SDI_SPMM_CSR_SPLIT;
        fam[n++] = SDI_SPMM_CSR_ROW;
        fam[n++] = SDI_SPMM_PCSR;
        fam[n++] = SDI_SPMM_CSR_WINDOW;
        fam[n++] = SDI_SPMM_COL_WINDOW;
    } else if (strcmp(label, "coo") == 0) {
        fam[n++] = SDI_SPMM_CSR_SPLIT;
    } else if (strncmp(label, "bsr", 3) == 0) {
        fam[n++] = SDI_SPMM_BSR;
        *b = atoi(label + 3);
    } else if (strncmp(label, "bell", 4) == 0) {
        fam[n++] = SDI_SPMM_BELL;
        *b = atoi(label + 4);
    } else if (strcmp(label, "tc") == 0 && sdi_config_get()->tc) {
        fam[n++] = SDI_SPMM_BSR_TC; /* tile height: whichever the sweep finds dense */
    }
    return n;
}

/* Adds p to cands unless present. */
static void push_cand(sdi_plan *cands, int *n, const sdi_plan *p)
{
    for (int i = 0; i < *n; i++)
        if (sdi_plan_equal(&cands[i], p))
            return;
    if (*n < MAX_CANDS)
        cands[(*n)++] = *p;
}

/* The task of ts's matrix for the families (statistics, when given, are the caller's). */
static void task_of(const task_state *ts, const sdi_spmv_stats *vst, const sdi_spmm_stats *mst, sdi_task *t)
{
    memset(t, 0, sizeof *t);
    t->op = ts->t.op;
    t->k = ts->t.op == SD_OP_SPMM ? ts->t.k : 1;
    t->a = ts->a;
    t->gpu = &ts->ctx->props;
    t->spmv = vst;
    t->spmm = mst;
}

/* The plans of family index fi at sweep `level`, at most the first 64 (as the tuner's
 * enumeration capped them); SD_ERR_OUT_OF_MEMORY only. */
static sd_status family_sweep(const sdi_task *t, int fi, int level, sdi_plan_list *out)
{
    memset(out, 0, sizeof *out);
    const sdi_family *f = sdi_family_at(fi);
    sd_status s = f != NULL && f->sweep != NULL ? f->sweep(t, level, out) : SD_ERR_UNSUPPORTED;
    if (s != SD_OK) {
        sdi_plan_list_free(out);
        if (s == SD_ERR_OUT_OF_MEMORY)
            return s;
        sdi_error_clear();
        return SD_OK;
    }
    if (out->n > 64)
        out->n = 64;
    return SD_OK;
}

/* SpMV candidates of family f matching slice height c / block b (0 = any). */
static sd_status spmv_family_cands(task_state *ts, const sdi_spmv_stats *st, int f, int c, int b,
                                   sdi_plan *cands, int *n)
{
    sdi_task t;
    task_of(ts, st, NULL, &t);
    const int fi = sdi_family_of(SD_OP_SPMV, f);
    sdi_plan p;
    int before = *n;
    if (sdi_plan_default(&t, fi, &p) == SD_OK && (c == 0 || p.p.spmv.c == c) && (b == 0 || p.p.spmv.b == b))
        push_cand(cands, n, &p);
    sdi_error_clear();
    for (int level = 1; level <= 2 && *n - before < 1 + ts->o->sweep; level++) {
        sdi_plan_list v;
        sd_status fs = family_sweep(&t, fi, level, &v);
        if (fs != SD_OK)
            return fs;
        int matched = 0;
        for (int i = 0; i < v.n && *n - before < 1 + ts->o->sweep; i++) {
            if ((c != 0 && v.v[i].p.spmv.c != c) || (b != 0 && v.v[i].p.spmv.b != b))
                continue;
            matched++;
            push_cand(cands, n, &v.v[i]);
        }
        sdi_plan_list_free(&v);
        if (matched > 0 && level == 1 && *n - before > 0)
            break; /* level 2 only where level 1 had nothing for this label */
    }
    return SD_OK;
}

static sd_status spmm_family_cands(task_state *ts, const sdi_spmm_stats *st, int f, int b,
                                   sdi_plan *cands, int *n)
{
    sdi_task t;
    task_of(ts, NULL, st, &t);
    const int fi = sdi_family_of(SD_OP_SPMM, f);
    sdi_plan p;
    int before = *n;
    if (f == SDI_SPMM_PCSR && ts->o->pcsr_space) {
        /* The whole PCSR space (the cost model's training data), as plans. */
        sdi_spmm_config *v = NULL;
        int nv = 0;
        sd_status s = sdi_spmm_enumerate_pcsr(ts->a, ts->t.k, 1, &v, &nv);
        if (s == SD_OK)
            for (int i = 0; i < nv; i++) {
                memset(&p, 0, sizeof p);
                p.op = SD_OP_SPMM;
                p.k = ts->t.k;
                p.family = fi;
                p.p.spmm = v[i];
                push_cand(cands, n, &p);
            }
        sdi_free(v);
        if (s == SD_ERR_OUT_OF_MEMORY)
            return s;
        sdi_error_clear();
        return SD_OK;
    }
    if (sdi_plan_default(&t, fi, &p) == SD_OK && (b == 0 || p.p.spmm.block == b))
        push_cand(cands, n, &p);
    sdi_error_clear();
    for (int level = 1; level <= 2 && *n - before < 1 + ts->o->sweep; level++) {
        sdi_plan_list v;
        sd_status fs = family_sweep(&t, fi, level, &v);
        if (fs != SD_OK)
            return fs;
        int matched = 0;
        for (int i = 0; i < v.n && *n - before < 1 + ts->o->sweep; i++) {
            if (b != 0 && v.v[i].p.spmm.block != b)
                continue;
            matched++;
            push_cand(cands, n, &v.v[i]);
        }
        sdi_plan_list_free(&v);
        if (matched > 0 && level == 1 && *n - before > 0)
            break;
    }
    return SD_OK;
}

/* ---- measuring a dense candidate */
typedef struct {
    task_state *ts;
    sdi_candidate *c;
    sdi_validation val;
} dense_arg;

static sd_status dense_exec(sd_context *ctx, void *arg, cudaStream_t stream)
{
    dense_arg *d = arg;
    return sdi_exe_run(ctx, &d->c->exe, d->ts->d_in, d->ts->d_out, stream);
}

static sd_status dense_check(sd_context *ctx, void *arg)
{
    dense_arg *d = arg;
    if (d->ts->a->rows == 0)
        return SD_OK;
    return sdi_check_dense_output(ctx, &d->ts->ref, d->ts->d_out, &d->val);
}

/* Builds, validates and times plan p for task t; *us = mean (0 when it did not validate
 * or build). Returns an error only when the context broke or host memory ran out. */
static sd_status measure_dense(task_state *ts, const sdi_task *t, const sdi_plan *p, sdi_timing *tm, int *valid,
                               int *invalid)
{
    *valid = 0;
    *invalid = 0;
    sdi_candidate cand;
    memset(&cand, 0, sizeof cand);
    cand.kind = SDI_CAND_PLAN;
    cand.op = t->op;
    cand.k = t->k;
    cand.plan = *p;
    sdi_candidate *im = &cand;
    sd_status s = sdi_candidate_build(ts->ctx, t, im, NULL, 0);
    if (s == SD_OK) {
        size_t out_bytes = (size_t)ts->a->rows * (size_t)ts->t.k * sizeof(float);
        if (out_bytes > 0) /* poison: an entry never written fails validation */
            s = sdi_cuda_status(ts->ctx, cudaMemsetAsync(ts->d_out, 0xff, out_bytes, ts->ctx->stream),
                                "poisoning the output", NULL);
        dense_arg d = {ts, im, {0}};
        char name[SDI_PLAN_TEXT];
        sdi_candidate_describe(im, name, sizeof name);
        if (s == SD_OK)
            s = sdi_measure(ts->ctx, name, dense_exec, &d, dense_check, &d, tm);
        *valid = s == SD_OK;
        *invalid = s == SD_ERR_VALIDATION;
    }
    sdi_candidate_release(im);
    if (ts->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "%s", ts->ctx->broken_reason);
    sdi_error_clear(); /* a refused or failing candidate is a result, not an error */
    return SD_OK;
}

static void record_pcsr(task_state *ts, const sdi_plan *p, double us)
{
    const sdi_spmm_config *c = &p->p.spmm;
    if (c->tmpl != SDI_SPMM_PCSR || ts->npcsr >= (int)(sizeof ts->pcsr / sizeof ts->pcsr[0]))
        return;
    ts->pcsr[ts->npcsr++] = (pcsr_point){c->warps, c->coarsen, c->pcsr_v, c->pcsr_s, c->pcsr_group, us};
}

static sd_status measure_dense_labels(task_state *ts)
{
    sdi_plan *cands = NULL;
#define SD_FREE_ALL sdi_free(cands)
    sdi_spmv_stats vst;
    sdi_spmm_stats mst;
    if (ts->t.op == SD_OP_SPMV)
        SD_TRY(sdi_spmv_stats_compute(ts->a, &vst));
    else
        sdi_spmm_stats_compute(ts->a, &mst);
    cands = sdi_calloc(MAX_CANDS, sizeof *cands);
    SD_CHECK_ALLOC(cands, "candidates");
    sdi_task task;
    task_of(ts, ts->t.op == SD_OP_SPMV ? &vst : NULL, ts->t.op == SD_OP_SPMM ? &mst : NULL, &task);
    int nv = 0;
    const char *const *vocab = sdi_vocabulary(ts->t.op, &nv);
    for (int l = 0; l < nv; l++) {
        int fam[MAX_FAMS], nf, c = 0, b = 0, n = 0;
        nf = ts->t.op == SD_OP_SPMV ? spmv_label_families(vocab[l], &vst, fam, &c, &b)
                                    : spmm_label_families(vocab[l], &mst, fam, &b);
        memset(cands, 0, MAX_CANDS * sizeof *cands);
        for (int i = 0; i < nf; i++)
            SD_TRY(ts->t.op == SD_OP_SPMV ? spmv_family_cands(ts, &vst, fam[i], c, b, cands, &n)
                                          : spmm_family_cands(ts, &mst, fam[i], b, cands, &n));
        label_result *lr = &ts->lab[l];
        for (int i = 0; i < n; i++) {
            sdi_timing tm;
            int valid = 0, invalid = 0, seen = -1;
            for (int q = 0; q < ts->nmemo && seen < 0; q++)
                if (sdi_plan_equal(&ts->memo[q], &cands[i]))
                    seen = q;
            if (seen >= 0) {
                tm = ts->memo_t[seen];
                valid = ts->memo_valid[seen];
                invalid = ts->memo_invalid[seen];
            } else {
                SD_TRY(measure_dense(ts, &task, &cands[i], &tm, &valid, &invalid));
                if (ts->nmemo < MAX_CANDS) {
                    ts->memo[ts->nmemo] = cands[i];
                    ts->memo_t[ts->nmemo] = tm;
                    ts->memo_valid[ts->nmemo] = valid;
                    ts->memo_invalid[ts->nmemo++] = invalid;
                }
            }
            lr->tried++;
            lr->invalid += invalid;
            if (!valid)
                continue;
            if (ts->t.op == SD_OP_SPMM && seen < 0)
                record_pcsr(ts, &cands[i], tm.mean_us);
            if (lr->us == 0 || tm.mean_us < lr->us) {
                lr->us = tm.mean_us;
                lr->pipelined_us = tm.pipelined_us;
                sdi_plan_label(&cands[i], lr->family, sizeof lr->family);
                sdi_plan_describe(&cands[i], lr->config, sizeof lr->config);
            }
        }
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ---- SpGEMM */
typedef struct {
    sdi_executable *e;
    sd_device_csr c;
    int have;
    const sdi_reference *ref;
} sg_arg;

static sd_status sg_exec(sd_context *ctx, void *p, cudaStream_t st)
{
    sg_arg *r = p;
    if (r->have)
        sdi_spgemm_output_free(&r->c, st);
    r->have = 0;
    sd_status s = sdi_exe_run_spgemm(ctx, r->e, st, &r->c);
    r->have = s == SD_OK;
    return s;
}

/* The SpGEMM rule of docs/ARCHITECTURE.md "Validation" (the validator coalesces and
 * compares; our executor also promises sorted columns, which the tuner's users rely on). */
static sd_status sg_check(sd_context *ctx, void *p)
{
    sg_arg *r = p;
    if (!r->have)
        return SDI_ERR(SD_ERR_INTERNAL, "no SpGEMM output to check");
    sdi_validation v;
    return sdi_check_spgemm_output(ctx, r->ref, r->c.rows, r->c.cols, r->c.nnz, r->c.rowptr, 8,
                                   r->c.colind, r->c.vals, &v);
}

static const int sg_label_family[3] = {SDI_SPGEMM_HASH, SDI_SPGEMM_TILED, SDI_SPGEMM_HYBRID};

static sd_status measure_spgemm_labels(task_state *ts, sd_csr *at)
{
    sdi_spgemm_operands *op = NULL;
    sdi_plan *cands = NULL;
    sdi_plan_list v;
    memset(&v, 0, sizeof v);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(cands);                                                                   \
        sdi_plan_list_free(&v);                                                            \
        sdi_spgemm_operands_destroy(op);                                                   \
    } while (0)
    int aat = ts->a->rows != ts->a->cols;
    SD_TRY(sdi_reference_spgemm(ts->a, aat ? at : ts->a, &ts->ref));
    SD_TRY(sdi_spgemm_operands_create(ts->ctx, ts->a, NULL, aat, &op));
    sdi_sg_summary sm;
    sdi_sg_limits lim;
    sdi_sg_summarize(sdi_spgemm_operands_rowinfo(op), &sm);
    sdi_sg_limits_from_props(&ts->ctx->props, &lim);
    sdi_task task;
    task_of(ts, NULL, NULL, &task);
    task.sg_rows = sdi_spgemm_operands_rowinfo(op);
    task.sg = &sm;
    task.sg_lim = &lim;
    cands = sdi_calloc(MAX_CANDS, sizeof *cands);
    SD_CHECK_ALLOC(cands, "candidates");
    int owner[MAX_CANDS], n = 0;
    for (int l = 0; l < 3; l++) {
        int fi = sdi_family_of(SD_OP_SPGEMM, sg_label_family[l]), before = n;
        sdi_plan c;
        if (sdi_plan_default(&task, fi, &c) == SD_OK) {
            owner[n] = l;
            cands[n++] = c;
        }
        sdi_error_clear();
        SD_TRY(family_sweep(&task, fi, 1, &v));
        for (int i = 0; i < v.n && n < MAX_CANDS && n - before < 1 + ts->o->sweep; i++) {
            int dup = 0;
            for (int q = before; q < n; q++)
                dup |= sdi_plan_equal(&cands[q], &v.v[i]);
            if (!dup) {
                owner[n] = l;
                cands[n++] = v.v[i];
            }
        }
        sdi_plan_list_free(&v);
    }
    for (int i = 0; i < n; i++) {
        label_result *lr = &ts->lab[owner[i]];
        lr->tried++;
        sdi_candidate cand;
        memset(&cand, 0, sizeof cand);
        cand.kind = SDI_CAND_PLAN;
        cand.op = SD_OP_SPGEMM;
        cand.k = 1;
        cand.plan = cands[i];
        cand.sg_aat = aat;
        cand.sg_ops = op; /* lent: shared by the candidates */
        if (sdi_candidate_build(ts->ctx, &task, &cand, NULL, 0) != SD_OK) {
            sdi_error_clear();
            if (ts->ctx->broken)
                break;
            continue;
        }
        char cfg[SDI_PLAN_TEXT];
        sdi_plan_describe(&cands[i], cfg, sizeof cfg);
        sg_arg r = {.e = &cand.exe, .ref = &ts->ref};
        sdi_timing tm;
        sd_status s = sdi_measure(ts->ctx, cfg, sg_exec, &r, sg_check, &r, &tm);
        if (r.have)
            sdi_spgemm_output_free(&r.c, ts->ctx->stream);
        (void)sdi_stream_sync(ts->ctx, "corpus spgemm", NULL);
        sdi_candidate_release(&cand);
        lr->invalid += s == SD_ERR_VALIDATION;
        if (s == SD_OK && (lr->us == 0 || tm.mean_us < lr->us)) {
            lr->us = tm.mean_us;
            lr->pipelined_us = tm.pipelined_us;
            sdi_plan_label(&cands[i], lr->family, sizeof lr->family);
            snprintf(lr->config, sizeof lr->config, "%s", cfg);
        }
        sdi_error_clear();
        if (ts->ctx->broken)
            break;
    }
    SD_FREE_ALL;
    if (ts->ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "%s", ts->ctx->broken_reason);
    return SD_OK;
#undef SD_FREE_ALL
}

/* ---- one task */
static sd_status baseline_of(task_state *ts, const float *host_in)
{
    sdi_baseline *bl = sdi_calloc(1, sizeof *bl);
    if (bl == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the baseline");
    sdi_baseline_options bo;
    memset(&bo, 0, sizeof bo);
    bo.k = ts->t.k;
    bo.aat = -1;
    sd_status s = sdi_cusparse_baseline(ts->ctx, ts->a, ts->t.op, host_in, &bo, bl);
    if (s == SD_OK && bl->best >= 0) {
        ts->baseline_us = bl->v[bl->best].timing.mean_us;
        snprintf(ts->baseline_variant, sizeof ts->baseline_variant, "%s", bl->v[bl->best].name);
    }
    sdi_free(bl);
    return s;
}

static void features_json(sdi_json *j, const sd_features *f)
{
    sdi_json_key(j, "features");
    sdi_json_begin_object(j);
    for (int i = 0; i < SD_NUM_FEATURES; i++) {
        char num[40];
        snprintf(num, sizeof num, "%.17g", f->values[i]);
        sdi_json_key(j, sdi_feature_get(i)->name);
        sdi_json_raw(j, num);
    }
    sdi_json_end_object(j);
    sdi_json_key(j, "shape_class");
    sdi_json_string(j, sd_shape_class_name(f->shape_class));
}

static void head_json(sdi_json *j, const sdi_corpus_entry *e, sdi_corpus_opk t)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "matrix");
    sdi_json_string(j, e->name);
    sdi_json_key(j, "op");
    sdi_json_string(j, sdi_op_name(t.op));
    sdi_json_key(j, "k");
    sdi_json_int(j, t.k);
    sdi_json_key(j, "source");
    sdi_json_string(j, e->text);
}

static sd_status write_error(sdi_corpus_journal *jr, const sdi_corpus_entry *e, sdi_corpus_opk t,
                             const char *why)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    head_json(&j, e, t);
    sdi_json_key(&j, "error");
    sdi_json_string(&j, why);
    sdi_json_end_object(&j);
    sd_status s = sdi_json_finish(&j);
    if (s == SD_OK)
        s = sdi_corpus_journal_append(jr, e->name, t, j.buf);
    sdi_json_free(&j);
    return s;
}

static sd_status write_task(sdi_corpus_journal *jr, const sdi_corpus_entry *e, const task_state *ts,
                            const sd_features *f, const double *pfeat, double seconds)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    head_json(&j, e, ts->t);
    sdi_json_key(&j, "rows");
    sdi_json_int(&j, ts->a->rows);
    sdi_json_key(&j, "cols");
    sdi_json_int(&j, ts->a->cols);
    sdi_json_key(&j, "nnz");
    sdi_json_int(&j, ts->a->nnz);
    sdi_json_key(&j, "gpu");
    sdi_json_string(&j, ts->ctx->props.name);
    sdi_json_key(&j, "seconds");
    sdi_json_number(&j, seconds);
    features_json(&j, f);
    int nv = 0;
    const char *const *vocab = sdi_vocabulary(ts->t.op, &nv);
    sdi_json_key(&j, "tasks");
    sdi_json_begin_array(&j);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "op");
    sdi_json_string(&j, sdi_op_name(ts->t.op));
    sdi_json_key(&j, "k");
    sdi_json_int(&j, ts->t.k);
    sdi_json_key(&j, "baseline_us");
    sdi_json_number(&j, ts->baseline_us);
    sdi_json_key(&j, "templates");
    sdi_json_begin_object(&j);
    for (int l = 0; l < nv; l++) {
        sdi_json_key(&j, vocab[l]);
        if (ts->lab[l].us > 0)
            sdi_json_number(&j, ts->lab[l].us);
        else
            sdi_json_null(&j);
    }
    sdi_json_end_object(&j);
    sdi_json_end_object(&j);
    sdi_json_end_array(&j);
    sdi_json_key(&j, "baseline_variant");
    sdi_json_string(&j, ts->baseline_variant);
    sdi_json_key(&j, "templates_detail");
    sdi_json_begin_object(&j);
    for (int l = 0; l < nv; l++) {
        const label_result *lr = &ts->lab[l];
        sdi_json_key(&j, vocab[l]);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "family");
        sdi_json_string(&j, lr->family);
        sdi_json_key(&j, "config");
        sdi_json_string(&j, lr->config);
        sdi_json_key(&j, "us");
        sdi_json_number(&j, lr->us > 0 ? lr->us : NAN);
        sdi_json_key(&j, "pipelined_us");
        sdi_json_number(&j, lr->us > 0 ? lr->pipelined_us : NAN);
        sdi_json_key(&j, "tried");
        sdi_json_int(&j, lr->tried);
        sdi_json_key(&j, "invalid");
        sdi_json_int(&j, lr->invalid);
        sdi_json_end_object(&j);
    }
    sdi_json_end_object(&j);
    if (ts->t.op == SD_OP_SPMM && pfeat != NULL) {
        sdi_json_key(&j, "pcsr");
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "features");
        sdi_json_begin_array(&j);
        for (int i = 0; i < SDI_PSPMM_NFEAT; i++) {
            char num[40];
            snprintf(num, sizeof num, "%.17g", pfeat[i]);
            sdi_json_raw(&j, num);
        }
        sdi_json_end_array(&j);
        sdi_json_key(&j, "configs");
        sdi_json_begin_array(&j);
        for (int i = 0; i < ts->npcsr; i++) {
            const pcsr_point *p = &ts->pcsr[i];
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "w");
            sdi_json_int(&j, p->w);
            sdi_json_key(&j, "f");
            sdi_json_int(&j, p->f);
            sdi_json_key(&j, "v");
            sdi_json_int(&j, p->v);
            sdi_json_key(&j, "s");
            sdi_json_int(&j, p->s);
            sdi_json_key(&j, "group");
            sdi_json_int(&j, p->group);
            sdi_json_key(&j, "us");
            sdi_json_number(&j, p->us);
            sdi_json_end_object(&j);
        }
        sdi_json_end_array(&j);
        sdi_json_end_object(&j);
    }
    sdi_json_end_object(&j);
    sd_status s = sdi_json_finish(&j);
    if (s == SD_OK)
        s = sdi_corpus_journal_append(jr, e->name, ts->t, j.buf);
    sdi_json_free(&j);
    return s;
}

/* Measures one task of a; writes its line (measurements or error). Returns an error
 * only for what stops the run. */
static sd_status run_task(sd_context *ctx, const sdi_corpus_build_opts *o, sdi_corpus_journal *jr,
                          const sdi_corpus_entry *e, const sd_csr *a, sd_csr *at,
                          const sd_features *f, const double *pfeat, sdi_corpus_opk t,
                          char *summary, size_t scap)
{
    task_state *ts = NULL;
    float *host_in = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        if (ts != NULL) {                                                                  \
            sdi_device_free(ts->d_in);                                                     \
            sdi_device_free(ts->d_out);                                                    \
            sdi_reference_free(&ts->ref);                                                  \
        }                                                                                  \
        sdi_free(ts);                                                                      \
        sdi_free(host_in);                                                                 \
    } while (0)
    double t0 = sdi_now();
    ts = sdi_calloc(1, sizeof *ts);
    SD_CHECK_ALLOC(ts, "the task state");
    ts->ctx = ctx;
    ts->o = o;
    ts->a = a;
    ts->t = t;
    sd_status s = SD_OK;
    char why[400] = "";
    if (t.op == SD_OP_SPGEMM) {
        if (o->max_products > 0 && f->values[SDI_F_U_TOTAL] > o->max_products) {
            snprintf(why, sizeof why, "%.3g products > --max-products %.3g", f->values[SDI_F_U_TOTAL],
                     o->max_products);
        } else {
            s = baseline_of(ts, NULL);
            if (s == SD_OK)
                s = measure_spgemm_labels(ts, at);
        }
    } else {
        size_t in_n = (size_t)a->cols * (size_t)t.k, out_n = (size_t)a->rows * (size_t)t.k;
        host_in = sdi_malloc_array(in_n ? in_n : 1, sizeof *host_in);
        SD_CHECK_ALLOC(host_in, "the dense operand");
        sdi_gen_dense(host_in, (int64_t)in_n, SDI_VALUES_UNIFORM, 0x5d1770);
        s = sdi_reference_dense(a, t.op, host_in, t.k, 0, &ts->ref);
        if (s == SD_OK)
            s = sdi_device_upload(ctx, (void **)&ts->d_in, host_in, in_n * sizeof(float), "the dense operand");
        if (s == SD_OK)
            s = sdi_device_malloc(ctx, (void **)&ts->d_out, (out_n ? out_n : 1) * sizeof(float), "the dense output");
        if (s == SD_OK)
            s = baseline_of(ts, host_in);
        if (s == SD_OK)
            s = measure_dense_labels(ts);
    }
    if (s != SD_OK && why[0] == '\0')
        snprintf(why, sizeof why, "%.390s", sd_last_error());
    int any = 0, best = -1;
    int nv = 0;
    const char *const *vocab = sdi_vocabulary(t.op, &nv);
    for (int l = 0; l < nv; l++)
        if (ts->lab[l].us > 0) {
            any = 1;
            if (best < 0 || ts->lab[l].us < ts->lab[best].us)
                best = l;
        }
    if (why[0] == '\0' && ts->baseline_us <= 0)
        snprintf(why, sizeof why, "no valid cuSPARSE variant");
    if (why[0] == '\0' && !any)
        snprintf(why, sizeof why, "no template validated");
    sd_status ws = why[0] != '\0' ? write_error(jr, e, t, why)
                                  : write_task(jr, e, ts, f, pfeat, sdi_now() - t0);
    if (why[0] != '\0')
        snprintf(summary, scap, "error: %s", why);
    else
        snprintf(summary, scap, "best %s %.1f us (%s), cuSPARSE %s %.1f us, %.1f s", vocab[best],
                 ts->lab[best].us, ts->lab[best].family, ts->baseline_variant, ts->baseline_us,
                 sdi_now() - t0);
    SD_FREE_ALL;
    if (ws != SD_OK)
        return ws;
    if (ctx->broken)
        return SDI_ERR(SD_ERR_CUDA, "%s", ctx->broken_reason);
    return why[0] != '\0' ? SD_ERR_VALIDATION : SD_OK; /* "an error line was written" */
#undef SD_FREE_ALL
}

static sd_status load_entry(const sdi_corpus_entry *e, sd_csr *a)
{
    sd_status s = e->kind == SDI_CENTRY_GEN ? sdi_gen(e->text, 42, a) : sd_csr_read(e->text, a);
    if (s != SD_OK)
        return s;
    /* Values do not change times; seeded ones keep every input finite and comparable. */
    sdi_gen_values(a, SDI_VALUES_UNIFORM, 43);
    return sdi_analysis_check(a);
}

/* A matrix of nnz entries outside [min_nnz, max_nnz] (a bound of 0 is none): counted in
 * sum; 1 above the band, -1 below it, 0 inside. */
static int outside_band(const sdi_corpus_build_opts *o, double nnz, sdi_corpus_build_summary *sum)
{
    if (o->max_nnz > 0 && nnz > o->max_nnz) {
        sum->too_big++;
        return 1;
    }
    if (o->min_nnz > 0 && nnz < o->min_nnz) {
        sum->too_small++;
        return -1;
    }
    return 0;
}

sd_status sdi_corpus_build(sd_context *ctx, const sdi_corpus_build_opts *o,
                           sdi_corpus_build_summary *sum)
{
    sdi_corpus_journal jr;
    sd_csr a, at;
    memset(&a, 0, sizeof a);
    memset(&at, 0, sizeof at);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sd_csr_free(&a);                                                                   \
        sd_csr_free(&at);                                                                  \
        sdi_corpus_journal_close(&jr);                                                     \
    } while (0)
    memset(sum, 0, sizeof *sum);
    if (o->nops < 1 || o->sweep < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "corpus: %d tasks, sweep %d", o->nops, o->sweep);
    double t0 = sdi_now();
    SD_TRY(sdi_corpus_journal_open(o->out_path, &jr));
    if (o->log != NULL && (jr.lines > 0 || jr.dropped_bytes > 0 || jr.bad_lines > 0))
        fprintf(o->log, "corpus: %s holds %d finished tasks%s%s\n", o->out_path, jr.lines,
                jr.dropped_bytes > 0 ? "; dropped a torn last line" : "",
                jr.bad_lines > 0 ? "; some lines do not parse (ignored)" : "");
    for (int i = 0; i < o->nentries; i++) {
        const sdi_corpus_entry *e = &o->entries[i];
        int unfinished = 0;
        for (int q = 0; q < o->nops; q++)
            unfinished += !sdi_corpus_journal_done(&jr, e->name, o->ops[q]);
        sum->already_done += o->nops - unfinished;
        if (unfinished == 0)
            continue;
        if (e->nnz_hint > 0 && outside_band(o, e->nnz_hint, sum) != 0)
            continue;
        if (o->time_limit_s > 0 && sdi_now() - t0 > o->time_limit_s) {
            sum->stopped_by_time = 1;
            sum->remaining += unfinished;
            continue;
        }
        sd_status s = load_entry(e, &a);
        const int side = s == SD_OK ? outside_band(o, (double)a.nnz, sum) : 0;
        if (side != 0) {
            if (o->log != NULL)
                fprintf(o->log, "corpus: %s: nnz %lld %s: skipped\n", e->name, (long long)a.nnz,
                        side > 0 ? "> --max-nnz" : "< --min-nnz");
            sd_csr_free(&a);
            continue;
        }
        sd_features fdense, fsg;
        double pfeat[SDI_PSPMM_NFEAT];
        int need_sg = 0, need_dense = 0;
        for (int q = 0; q < o->nops; q++)
            if (!sdi_corpus_journal_done(&jr, e->name, o->ops[q])) {
                need_sg |= o->ops[q].op == SD_OP_SPGEMM;
                need_dense |= o->ops[q].op != SD_OP_SPGEMM;
            }
        if (s == SD_OK && need_dense)
            s = sd_analyze(&a, SD_OP_SPMV, &fdense);
        if (s == SD_OK && need_dense)
            s = sdi_paramspmm_features(&a, pfeat);
        if (s == SD_OK && need_sg)
            s = sd_analyze(&a, SD_OP_SPGEMM, &fsg);
        if (s == SD_OK && need_sg && a.rows != a.cols)
            s = sdi_csr_transpose(&a, &at);
        if (s != SD_OK) {
            /* An input that cannot be read or analysed is the list's problem: record it
             * so a restart does not retry, and go on. */
            char why[400];
            snprintf(why, sizeof why, "input: %.380s", sd_last_error());
            if (s == SD_ERR_OUT_OF_MEMORY) {
                SD_FREE_ALL;
                return s;
            }
            for (int q = 0; q < o->nops; q++)
                if (!sdi_corpus_journal_done(&jr, e->name, o->ops[q])) {
                    SD_TRY(write_error(&jr, e, o->ops[q], why));
                    sum->errors++;
                }
            if (o->log != NULL)
                fprintf(o->log, "corpus: %s: %s\n", e->name, why);
            sd_csr_free(&a);
            sd_csr_free(&at);
            sdi_error_clear();
            continue;
        }
        for (int q = 0; q < o->nops; q++) {
            sdi_corpus_opk t = o->ops[q];
            if (sdi_corpus_journal_done(&jr, e->name, t))
                continue;
            if (o->time_limit_s > 0 && sdi_now() - t0 > o->time_limit_s) {
                sum->stopped_by_time = 1;
                sum->remaining++;
                continue;
            }
            char line[600], tname[16];
            sdi_corpus_opk_name(t, tname, sizeof tname);
            s = run_task(ctx, o, &jr, e, &a, &at, t.op == SD_OP_SPGEMM ? &fsg : &fdense,
                         t.op == SD_OP_SPMM ? pfeat : NULL, t, line, sizeof line);
            if (o->log != NULL) {
                fprintf(o->log, "[%7.1f s] %d/%d %s %s (nnz %lld): %s\n", sdi_now() - t0, i + 1,
                        o->nentries, e->name, tname, (long long)a.nnz, line);
                fflush(o->log);
            }
            if (s == SD_OK) {
                sum->measured++;
            } else if (s == SD_ERR_VALIDATION) {
                sum->errors++;
            } else {
                SD_FREE_ALL;
                sum->seconds = sdi_now() - t0;
                return s;
            }
            sdi_error_clear();
        }
        sd_csr_free(&a);
        sd_csr_free(&at);
    }
    sum->seconds = sdi_now() - t0;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}
