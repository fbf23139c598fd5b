/* tests/cpu/test_corpus_build.c: the host side of the corpus builder: the matrix list and
 * task parsers, the append-only journal behind resumption (the finished set, a torn last
 * line from a crash, a complete last line without its newline, unparseable lines), the
 * corpus reader's handling of builder lines (error lines skipped, extra members
 * ignored) and the ParamSpMM decider's examples read from them. */
#include <fcntl.h>
#include <unistd.h>

#include "corpus/corpus.h"
#include "corpus/corpus_build.h"
#include "corpus/pcsr_data.h"
#include "sdt.h"

static char dir[256];

static const char *path_in(const char *name)
{
    static char buf[4][320];
    static int slot;
    char *b = buf[slot++ & 3];
    snprintf(b, 320, "%s/%s", dir, name);
    return b;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static char *read_all(const char *path)
{
    char *b = NULL;
    size_t n = 0;
    if (sdi_model_read_file(path, &b, &n) != SD_OK)
        return NULL;
    return b;
}

static void test_list_parse(void)
{
    const char *text = "# a comment\n"
                       "\n"
                       "stencil2d:n=30\n"
                       "  bcsstk13   nnz=83883\n"
                       "data/m1.mtx\n"
                       "/abs/path/web.mtx.gz nnz=1e6\n"
                       "x.sdm\n"
                       "uniform:rows=1000,deg=8 # trailing comment\n";
    sdi_corpus_entry *e = NULL;
    int n = 0;
    SDT_OK(sdi_corpus_list_parse(text, strlen(text), "/m", &e, &n));
    SDT_CHECK(n == 6, "%d entries", n);
    if (n == 6) {
        SDT_CHECK(e[0].kind == SDI_CENTRY_GEN && strcmp(e[0].name, "stencil2d:n=30") == 0 &&
                  e[0].line == 3 && e[0].nnz_hint == 0, "entry 0: %d %s line %d", e[0].kind, e[0].name, e[0].line);
        SDT_CHECK(e[1].kind == SDI_CENTRY_SHARED && strcmp(e[1].name, "bcsstk13") == 0 &&
                  strcmp(e[1].text, "/m/suitesparse/bcsstk13.mtx.gz") == 0 && e[1].nnz_hint == 83883,
                  "entry 1: %s %s %g", e[1].name, e[1].text, e[1].nnz_hint);
        SDT_CHECK(e[2].kind == SDI_CENTRY_FILE && strcmp(e[2].name, "m1") == 0, "entry 2: %s", e[2].name);
        SDT_CHECK(e[3].kind == SDI_CENTRY_FILE && strcmp(e[3].name, "web") == 0 && e[3].nnz_hint == 1e6,
                  "entry 3: %s %g", e[3].name, e[3].nnz_hint);
        SDT_CHECK(e[4].kind == SDI_CENTRY_FILE && strcmp(e[4].name, "x") == 0, "entry 4: %s", e[4].name);
        SDT_CHECK(e[5].kind == SDI_CENTRY_GEN && e[5].line == 8, "entry 5 line %d", e[5].line);
    }
    sdi_free(e);
    const char *bad = "stencil2d:n=30\nbcsstk13 size=12\n";
    SDT_STATUS(sdi_corpus_list_parse(bad, strlen(bad), "/m", &e, &n), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "line 2") != NULL, "message: %s", sd_last_error());
    const char *bad2 = "bcsstk13 nnz=abc\n";
    SDT_STATUS(sdi_corpus_list_parse(bad2, strlen(bad2), "/m", &e, &n), SD_ERR_PARSE);
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    SDT_STATUS(sdi_corpus_list_parse(longname, strlen(longname), "/m", &e, &n), SD_ERR_PARSE);
    SDT_STATUS(sdi_corpus_list_read(path_in("none.txt"), "/m", &e, &n), SD_ERR_IO);
    /* A generator spec its family rejects fails the list up front, naming line and key. */
    const char *badspec = "stencil2d:n=30\nknn:n=2000,k=6,dim=8 nnz=12000\n";
    SDT_STATUS(sdi_corpus_list_parse(badspec, strlen(badspec), "/m", &e, &n), SD_ERR_INVALID_ARG);
    SDT_CHECK(e == NULL && n == 0, "failed parse left %d entries", n);
    SDT_CHECK(strstr(sd_last_error(), "line 2") != NULL && strstr(sd_last_error(), "'dim'") != NULL,
              "message: %s", sd_last_error());
    /* a twin without file= reads the matrices directory's paper60.tsv (when there is one) */
    char p60[600];
    snprintf(p60, sizeof p60, "%s/paper60.tsv", SD_MATRICES_DIR);
    if (access(p60, R_OK) == 0) {
        const char *twins = "twin:name=HB_str_0,scale=0.5\n";
        SDT_OK(sdi_corpus_list_parse(twins, strlen(twins), SD_MATRICES_DIR, &e, &n));
        SDT_CHECK(n == 1 && strcmp(e[0].name, "twin:name=HB_str_0,scale=0.5") == 0 &&
                      strstr(e[0].text, ",file=") != NULL && strstr(e[0].text, "paper60.tsv") != NULL,
                  "twin entry: name '%s', spec '%s'", n == 1 ? e[0].name : "", n == 1 ? e[0].text : "");
        sdi_free(e);
    }
    SDT_STATUS(sdi_corpus_list_parse("twin:name=HB_str_0\n", 19, "/nonexistent", &e, &n), SD_ERR_IO);
    const char *badfam = "stencil9d:n=3\n";
    SDT_STATUS(sdi_corpus_list_parse(badfam, strlen(badfam), "/m", &e, &n), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "line 1") != NULL, "message: %s", sd_last_error());
}

/* The project's own lists parse, every generator spec included (a bad one used to be
 * found only when a GPU run reached it). */
static void test_project_lists(void)
{
    static const char *const lists[] = {"corpus.txt", "quick.txt", "real.txt"};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/../../bench/sets/%s", SD_TEST_DATA_DIR, lists[i]);
        sdi_corpus_entry *e = NULL;
        int n = 0;
        sd_status s = sdi_corpus_list_read(path, SD_MATRICES_DIR, &e, &n);
        SDT_CHECK(s == SD_OK && n > 0, "bench/sets/%s: %d entries: %s", lists[i], n,
                  sd_last_error());
        sdi_free(e);
    }
}

static void test_ops_parse(void)
{
    sdi_corpus_opk t[SDI_CORPUS_MAX_OPS];
    int n = 0;
    SDT_OK(sdi_corpus_ops_parse("spmv,spmm8,spmm32,spmm8,spgemm", t, &n));
    SDT_CHECK(n == 4, "%d tasks (duplicate kept?)", n);
    SDT_CHECK(t[0].op == SD_OP_SPMV && t[0].k == 1 && t[1].op == SD_OP_SPMM && t[1].k == 8 &&
              t[2].k == 32 && t[3].op == SD_OP_SPGEMM, "parsed wrong");
    char name[16];
    sdi_corpus_opk_name(t[2], name, sizeof name);
    SDT_CHECK(strcmp(name, "spmm32") == 0, "name %s", name);
    SDT_STATUS(sdi_corpus_ops_parse("spmv,spmx", t, &n), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_corpus_ops_parse("spmm", t, &n), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_corpus_ops_parse("spmm0", t, &n), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_corpus_ops_parse("spmm70000", t, &n), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_corpus_ops_parse("spmm-8", t, &n), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_corpus_ops_parse("", t, &n), SD_ERR_INVALID_ARG);
}

static const sdi_corpus_opk SPMV = {SD_OP_SPMV, 1}, SPMM32 = {SD_OP_SPMM, 32},
                            SPMM8 = {SD_OP_SPMM, 8}, SPGEMM = {SD_OP_SPGEMM, 1};

static void test_journal(void)
{
    const char *p = path_in("j.jsonl");
    unlink(p);
    sdi_corpus_journal j;
    SDT_OK(sdi_corpus_journal_open(p, &j)); /* created */
    SDT_CHECK(j.n == 0 && j.lines == 0, "fresh journal has %d keys", j.n);
    SDT_CHECK(!sdi_corpus_journal_done(&j, "a", SPMV), "done in an empty journal");
    SDT_OK(sdi_corpus_journal_append(&j, "a", SPMV, "{\"matrix\":\"a\",\"op\":\"spmv\",\"k\":1,\"x\":1}"));
    SDT_OK(sdi_corpus_journal_append(&j, "a", SPMM32, "{\"matrix\":\"a\",\"op\":\"spmm\",\"k\":32}"));
    SDT_OK(sdi_corpus_journal_append(&j, "b c", SPGEMM, "{\"matrix\":\"b c\",\"op\":\"spgemm\",\"k\":1,\"error\":\"x\"}"));
    SDT_CHECK(sdi_corpus_journal_done(&j, "a", SPMV) && sdi_corpus_journal_done(&j, "a", SPMM32) &&
              !sdi_corpus_journal_done(&j, "a", SPMM8) && sdi_corpus_journal_done(&j, "b c", SPGEMM) &&
              !sdi_corpus_journal_done(&j, "b", SPGEMM), "finished set after appends");
    SDT_STATUS(sdi_corpus_journal_append(&j, "a", SPMM8, "{\"a\":1}\n{\"b\":2}"), SD_ERR_INTERNAL);
    sdi_corpus_journal_close(&j);
    sdi_corpus_journal_close(&j); /* twice: harmless */

    /* Restart: the same finished set from the file. */
    SDT_OK(sdi_corpus_journal_open(p, &j));
    SDT_CHECK(j.lines == 3 && j.n == 3 && j.dropped_bytes == 0, "reopened: %d lines", j.lines);
    SDT_CHECK(sdi_corpus_journal_done(&j, "a", SPMM32) && sdi_corpus_journal_done(&j, "b c", SPGEMM) &&
              !sdi_corpus_journal_done(&j, "a", SPMM8), "finished set after reopening");
    sdi_corpus_journal_close(&j);

    /* A crash in the middle of a write: a torn last line is dropped, nothing else. */
    char *before = read_all(p);
    FILE *f = fopen(p, "ab");
    fputs("{\"matrix\":\"d\",\"op\":\"spmv\",\"k\":1,\"feat", f);
    fclose(f);
    SDT_OK(sdi_corpus_journal_open(p, &j));
    SDT_CHECK(j.lines == 3 && j.dropped_bytes > 0, "torn line: %d lines, %ld bytes dropped", j.lines,
              j.dropped_bytes);
    SDT_CHECK(!sdi_corpus_journal_done(&j, "d", SPMV), "a torn line counts as finished");
    SDT_OK(sdi_corpus_journal_append(&j, "d", SPMV, "{\"matrix\":\"d\",\"op\":\"spmv\",\"k\":1}"));
    sdi_corpus_journal_close(&j);
    char *after = read_all(p);
    SDT_CHECK(before != NULL && after != NULL && strncmp(before, after, strlen(before)) == 0 &&
              strcmp(after + strlen(before), "{\"matrix\":\"d\",\"op\":\"spmv\",\"k\":1}\n") == 0,
              "file after repair + append:\n%s", after ? after : "(null)");
    sdi_free(before);
    sdi_free(after);

    /* A complete last line without its newline is kept and terminated. */
    f = fopen(p, "ab");
    fputs("{\"matrix\":\"e\",\"op\":\"spmm\",\"k\":8}", f);
    fclose(f);
    SDT_OK(sdi_corpus_journal_open(p, &j));
    SDT_CHECK(j.lines == 5 && j.dropped_bytes == 0 && sdi_corpus_journal_done(&j, "e", SPMM8),
              "unterminated complete line: %d lines", j.lines);
    SDT_OK(sdi_corpus_journal_append(&j, "f", SPMV, "{\"matrix\":\"f\",\"op\":\"spmv\",\"k\":1}"));
    sdi_corpus_journal_close(&j);
    after = read_all(p);
    SDT_CHECK(after != NULL && strstr(after, "\"k\":8}\n{\"matrix\":\"f\"") != NULL, "newline added: %s",
              after ? after : "(null)");
    sdi_free(after);

    /* A broken line inside the file is ignored (not finished), blank lines too. */
    f = fopen(p, "ab");
    fputs("not json\n\n{\"no_matrix\":1}\n", f);
    fclose(f);
    SDT_OK(sdi_corpus_journal_open(p, &j));
    SDT_CHECK(j.lines == 6 && j.bad_lines == 2, "%d lines, %d bad", j.lines, j.bad_lines);
    sdi_corpus_journal_close(&j);

    /* Unwritable location: an error naming the path. */
    SDT_STATUS(sdi_corpus_journal_open(path_in("no/such/dir/j.jsonl"), &j), SD_ERR_IO);
    SDT_CHECK(strstr(sd_last_error(), "no/such/dir") != NULL, "message: %s", sd_last_error());
}

/* A builder line of an spmm task with features f0 (the rest 1.0 where it fits). */
static void builder_line(FILE *f, const char *name, const char *op, int k, double rowcv,
                         const char *templates, const char *pcsr)
{
    fprintf(f, "{\"matrix\":\"%s\",\"op\":\"%s\",\"k\":%d,\"source\":\"x\",\"gpu\":\"H200\",\"features\":{",
            name, op, k);
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        fprintf(f, "%s\"%s\":%g", i ? "," : "", sd_feature_name(i),
                strcmp(sd_feature_name(i), "row_cv") == 0 ? rowcv : 1000.0 / (i + 1));
    fprintf(f, "},\"shape_class\":\"uniform\",\"tasks\":[{\"op\":\"%s\",\"k\":%d,\"baseline_us\":10,"
               "\"templates\":%s}],\"templates_detail\":{}", op, k, templates);
    if (pcsr != NULL)
        fprintf(f, ",\"pcsr\":%s", pcsr);
    fprintf(f, "}\n");
}

static void test_builder_lines_as_corpus(void)
{
    const char *p = path_in("c.jsonl");
    FILE *f = fopen(p, "wb");
    const char *pf = "[1,2,3,4,5,6,7,8,9,0.1,0.2,0.3,0.4,0.5,10,20,0.3,0.6]";
    char pc[600];
    /* three configurations: the fastest of ParamSpMM's space is W4 F2 V1 S0; a faster
     * sub-warp one (group 16) and one outside the value sets (W 3) do not count */
    snprintf(pc, sizeof pc, "{\"features\":%s,\"configs\":[{\"w\":2,\"f\":1,\"v\":2,\"s\":1,\"group\":32,\"us\":9},"
             "{\"w\":4,\"f\":2,\"v\":1,\"s\":0,\"group\":32,\"us\":7},{\"w\":1,\"f\":1,\"v\":1,\"s\":0,\"group\":16,\"us\":3},"
             "{\"w\":3,\"f\":1,\"v\":1,\"s\":0,\"group\":32,\"us\":2}]}", pf);
    builder_line(f, "m1", "spmv", 1, 0.2, "{\"csr\":5,\"coo\":null,\"sell32\":4}", NULL);
    builder_line(f, "m1", "spmm", 32, 0.2, "{\"csr\":5,\"bsr4\":7,\"tc\":null}", pc);
    fprintf(f, "{\"matrix\":\"m2\",\"op\":\"spmm\",\"k\":8,\"source\":\"x\",\"error\":\"no valid cuSPARSE variant\"}\n");
    builder_line(f, "m3", "spmm", 8, 3.0, "{\"csr\":5}", "{\"features\":[1,2],\"configs\":[]}");
    fclose(f);
    sdi_corpus c;
    SDT_OK(sdi_corpus_read(p, &c));
    SDT_CHECK(c.nrecords == 3 && c.ntasks == 3, "%d records, %d tasks (the error line must be skipped)",
              c.nrecords, c.ntasks);
    if (c.ntasks == 3) {
        SDT_CHECK(c.tasks[1].op == SD_OP_SPMM && c.tasks[1].k == 32 && c.tasks[1].us[0] == 5 &&
                  c.tasks[1].us[2] == 7 && c.tasks[1].us[7] == 0, "spmm task parsed wrong");
        SDT_CHECK(strcmp(c.records[0].matrix, c.records[1].matrix) == 0, "one matrix, two lines");
    }
    sdi_corpus_free(&c);
    double *X = NULL;
    sdi_paramspmm_params *y = NULL;
    int n = 0, *ks = NULL;
    SDT_OK(sdi_paramspmm_examples_read(p, 0, &X, &y, &ks, &n));
    SDT_CHECK(n == 1, "%d decider examples (only m1's spmm line has usable PCSR data)", n);
    SDT_CHECK(n != 1 || ks[0] == 32, "the example's K: %d", n == 1 ? ks[0] : -1);
    sdi_free(ks);
    if (n == 1) {
        SDT_CHECK(y[0].w == 4 && y[0].f == 2 && y[0].v == 1 && y[0].s == 0, "best <%d,%d,%d,%d>",
                  y[0].w, y[0].f, y[0].v, y[0].s);
        SDT_CHECK(X[0] == 1 && X[17] == 0.6, "features %g .. %g", X[0], X[17]);
    }
    sdi_free(X);
    sdi_free(y);
    SDT_OK(sdi_paramspmm_examples_read(p, 8, &X, &y, NULL, &n));
    SDT_CHECK(n == 0, "K = 8 filter: %d examples", n);
    sdi_free(X);
    sdi_free(y);
    write_file(p, "{\"matrix\":\"m\"}\nnot json\n");
    SDT_STATUS(sdi_paramspmm_examples_read(p, 0, &X, &y, NULL, &n), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "line 2") != NULL, "message: %s", sd_last_error());
}

int main(void)
{
    sdt_init("test_corpus_build");
    snprintf(dir, sizeof dir, "/tmp/sd-test-corpus-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    SDT_RUN(test_list_parse);
    SDT_RUN(test_project_lists);
    SDT_RUN(test_ops_parse);
    SDT_RUN(test_journal);
    SDT_RUN(test_builder_lines_as_corpus);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return sdt_finish();
}
