/* tests/cpu/test_cache.c: the on-disk kernel cache: round trip, corrupt and truncated
 * entries discarded, key mismatch, unwritable root, two processes on one key. */
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/cache.h"
#include "sdt.h"

static char root[256];

static void make_key(sdi_cache_key *k, int op)
{
    sdi_cache_key_init(k);
    k->pattern_lo = 0x1234;
    k->pattern_hi = 0x5678;
    k->rows = 10;
    k->cols = 10;
    k->nnz = 30;
    k->op = op;
    snprintf(k->gpu_name, sizeof k->gpu_name, "NVIDIA H200");
    k->cc_major = 9;
}

static void fill_entry(sdi_cache_entry *e, sdi_cache_blob *blobs, char *cubin, size_t n)
{
    memset(e, 0, sizeof *e);
    e->plan_json = "{\"family\":\"csr_vector\"}";
    e->record_json = "{\"time_us\":7.5}";
    memset(blobs, 0, 2 * sizeof *blobs);
    snprintf(blobs[0].name, sizeof blobs[0].name, "cubin");
    blobs[0].data = cubin;
    blobs[0].size = n;
    snprintf(blobs[1].name, sizeof blobs[1].name, "empty");
    blobs[1].data = "";
    blobs[1].size = 0;
    e->blobs = blobs;
    e->nblobs = 2;
}

static void test_round_trip_and_corruption(void)
{
    sdi_cache *c = NULL;
    SDT_OK(sdi_cache_open(root, &c));
    if (c == NULL)
        return;
    sdi_cache_key k;
    make_key(&k, 0);
    sdi_cache_entry e, got;
    sdi_cache_blob blobs[2];
    char cubin[1000];
    for (int i = 0; i < 1000; i++)
        cubin[i] = (char)(i * 7);
    fill_entry(&e, blobs, cubin, sizeof cubin);
    bool hit = true;
    SDT_OK(sdi_cache_lookup(c, &k, &got, &hit));
    SDT_CHECK(!hit, "empty cache must miss");
    SDT_OK(sdi_cache_store(c, &k, &e));
    SDT_OK(sdi_cache_lookup(c, &k, &got, &hit));
    SDT_CHECK(hit, "stored entry must hit");
    if (hit) {
        SDT_CHECK(strcmp(got.plan_json, e.plan_json) == 0, "plan %s", got.plan_json);
        SDT_CHECK(strcmp(got.record_json, e.record_json) == 0, "record");
        SDT_CHECK(got.nblobs == 2 && got.blobs[0].size == 1000 &&
                      memcmp(got.blobs[0].data, cubin, 1000) == 0,
                  "cubin blob");
        SDT_CHECK(got.blobs[1].size == 0 && strcmp(got.blobs[1].name, "empty") == 0, "empty blob");
    }
    sdi_cache_entry_free(&got);

    /* A flipped byte: checksum mismatch → miss, file deleted. */
    char path[1200];
    SDT_OK(sdi_cache_entry_path(c, &k, path, sizeof path));
    FILE *f = fopen(path, "r+b");
    SDT_CHECK(f != NULL, "open entry");
    if (f) {
        fseek(f, 200, SEEK_SET);
        fputc(0x55 ^ 0xff, f);
        fclose(f);
    }
    SDT_OK(sdi_cache_lookup(c, &k, &got, &hit));
    SDT_CHECK(!hit, "corrupt entry must miss");
    SDT_CHECK(access(path, F_OK) != 0, "corrupt entry must be deleted");

    /* A truncated entry. */
    SDT_OK(sdi_cache_store(c, &k, &e));
    SDT_CHECK(truncate(path, 100) == 0, "truncate");
    SDT_OK(sdi_cache_lookup(c, &k, &got, &hit));
    SDT_CHECK(!hit, "truncated entry must miss");
    SDT_CHECK(access(path, F_OK) != 0, "truncated entry must be deleted");

    /* An entry whose stored key differs (another library version, or a collision):
     * copy key A's entry over key B's path. */
    sdi_cache_key kb = k;
    snprintf(kb.lib_version, sizeof kb.lib_version, "99.0.0");
    SDT_OK(sdi_cache_store(c, &k, &e));
    char path_b[1200];
    SDT_OK(sdi_cache_entry_path(c, &kb, path_b, sizeof path_b));
    SDT_CHECK(strcmp(path, path_b) != 0, "a version bump must change the path");
    SDT_OK(sdi_cache_store(c, &kb, &e)); /* creates the bucket directory */
    SDT_CHECK(rename(path, path_b) == 0, "rename");
    SDT_OK(sdi_cache_lookup(c, &kb, &got, &hit));
    SDT_CHECK(!hit, "key mismatch must miss");
    SDT_CHECK(access(path_b, F_OK) != 0, "mismatched entry must be deleted");
    sdi_cache_close(c);
}

/* A SpGEMM entry as sd_compile_spgemm stores it: the implementation record, the cubin of
 * the winner's module and the operand-preparation cubin, under a key with the general-B
 * flag; the same A with another B pattern is another key (a miss). */
static void test_spgemm_entry(void)
{
    sdi_cache *c = NULL;
    SDT_OK(sdi_cache_open(root, &c));
    if (c == NULL)
        return;
    sdi_cache_key k, k2;
    make_key(&k, SD_OP_SPGEMM);
    k.flags = SDI_CACHE_FLAG_GENERAL_B | 1;
    k2 = k;
    k2.pattern_hi ^= 1; /* another B pattern folds into another pattern hash */
    char rec[300], cub[2000], prep[700];
    for (size_t i = 0; i < sizeof rec; i++)
        rec[i] = (char)(i * 3);
    for (size_t i = 0; i < sizeof cub; i++)
        cub[i] = (char)(i * 5 + 1);
    for (size_t i = 0; i < sizeof prep; i++)
        prep[i] = (char)(i * 11 + 2);
    sdi_cache_blob blobs[3];
    memset(blobs, 0, sizeof blobs);
    snprintf(blobs[0].name, sizeof blobs[0].name, "impl");
    blobs[0].data = rec;
    blobs[0].size = sizeof rec;
    snprintf(blobs[1].name, sizeof blobs[1].name, "cubin");
    blobs[1].data = cub;
    blobs[1].size = sizeof cub;
    snprintf(blobs[2].name, sizeof blobs[2].name, "cubin_prep");
    blobs[2].data = prep;
    blobs[2].size = sizeof prep;
    sdi_cache_entry e = {"{\"op\":\"spgemm\",\"product\":\"A*B\"}",
                         "{\"winner\":{\"peak_bytes\":123}}", 3, blobs};
    SDT_OK(sdi_cache_store(c, &k, &e));
    sdi_cache_entry got;
    bool hit = false;
    SDT_OK(sdi_cache_lookup(c, &k, &got, &hit));
    SDT_CHECK(hit, "stored SpGEMM entry must hit");
    if (hit) {
        SDT_CHECK(strcmp(got.plan_json, e.plan_json) == 0, "plan %s", got.plan_json);
        SDT_CHECK(strstr(got.record_json, "peak_bytes") != NULL, "record %s", got.record_json);
        SDT_CHECK(got.nblobs == 3, "%d blobs", got.nblobs);
        for (int i = 0; i < 3 && i < got.nblobs; i++)
            SDT_CHECK(strcmp(got.blobs[i].name, blobs[i].name) == 0 &&
                          got.blobs[i].size == blobs[i].size &&
                          memcmp(got.blobs[i].data, blobs[i].data, blobs[i].size) == 0,
                      "blob %d (%s)", i, got.blobs[i].name);
    }
    sdi_cache_entry_free(&got);
    SDT_OK(sdi_cache_lookup(c, &k2, &got, &hit));
    SDT_CHECK(!hit, "another B pattern must miss");
    sdi_cache_entry_free(&got);
    sdi_cache_close(c);
}

static void test_unwritable_root(void)
{
    sdi_cache *c = NULL;
    SDT_STATUS(sdi_cache_open("/proc/sparseditto-cannot-exist", &c), SD_ERR_CACHE);
    SDT_CHECK(c == NULL, "handle NULL on failure");
    SDT_CHECK(strstr(sd_last_error(), "sparseditto-cannot-exist") != NULL, "message '%s'",
              sd_last_error());
    char file[300];
    snprintf(file, sizeof file, "%s/a-file", root);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    SDT_STATUS(sdi_cache_open(file, &c), SD_ERR_CACHE);
}

/* Two processes race on one key: lock, re-check, "compile", store. Exactly one
 * compiles; both end with the same entry. */
static void test_two_processes_one_compile(void)
{
    char counter[300];
    snprintf(counter, sizeof counter, "%s/compiles", root);
    unlink(counter);
    pid_t pids[2];
    for (int p = 0; p < 2; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            sdi_cache *c = NULL;
            if (sdi_cache_open(root, &c) != SD_OK)
                _exit(2);
            sdi_cache_key k;
            make_key(&k, 1);
            sdi_cache_lock *l = NULL;
            if (sdi_cache_lock_acquire(c, &k, 30.0, &l) != SD_OK)
                _exit(3);
            sdi_cache_entry got;
            bool hit = false;
            if (sdi_cache_lookup(c, &k, &got, &hit) != SD_OK)
                _exit(4);
            if (!hit) {
                FILE *f = fopen(counter, "a");
                fputs("x", f);
                fclose(f);
                usleep(100 * 1000);
                sdi_cache_entry e;
                sdi_cache_blob blobs[2];
                char cubin[64] = "cubin";
                fill_entry(&e, blobs, cubin, sizeof cubin);
                if (sdi_cache_store(c, &k, &e) != SD_OK)
                    _exit(5);
            }
            sdi_cache_entry_free(&got);
            sdi_cache_lock_release(l);
            sdi_cache_close(c);
            _exit(0);
        }
    }
    for (int p = 0; p < 2; p++) {
        int st = 0;
        waitpid(pids[p], &st, 0);
        SDT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d status %d", p, st);
    }
    struct stat sb;
    SDT_CHECK(stat(counter, &sb) == 0 && sb.st_size == 1, "compiles: %lld (want 1)",
              (long long)sb.st_size);
}

int main(void)
{
    sdt_init("test_cache");
    snprintf(root, sizeof root, "/tmp/sd-test-cache-%ld", (long)getpid());
    SDT_RUN(test_round_trip_and_corruption);
    SDT_RUN(test_spgemm_entry);
    SDT_RUN(test_unwritable_root);
    SDT_RUN(test_two_processes_one_compile);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return sdt_finish();
}
