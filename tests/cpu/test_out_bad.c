/* tests/cpu/test_out_bad.c: the bad-output suite, the writers' side of test_mtx_bad.c.
 * Table driven: every writer of user-named files (Matrix Market, gzip, .sdm, permutation
 * and model files) against every kind of output path: a new file, existing files with
 * modes 600 / 640 (kept) and 444 (refused), symbolic links (followed, the link kept), a
 * missing directory, a directory, the null and full devices and a FIFO (written in place,
 * never replaced) and a file-size limit (a write error mid-file). Each gives its status, a
 * message naming the path and the cause, no temporary file left, an existing file intact
 * after a failure, and no leak.
 *
 * Device nodes are made in the test's own folder (mknod, as root): a writer that replaced
 * its output would then replace that copy, never the machine's /dev/null. Without root the
 * real /dev/null and /dev/full are used (an unprivileged writer cannot replace them). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/io.h"
#include "formats/reorder.h"
#include "corpus/corpus.h"
#include "sdt.h"

#define N 2000 /* entries: every writer's output is well above the size limit below and
                  below a pipe's buffer (64 KiB), so a FIFO needs no concurrent reader */
#define FSIZE_LIMIT 4096

static char g_dir[64];
static sd_csr g_a;
static int32_t g_perm[N];
static char g_text[8192];

/* ------------------------------------------------------------------ writers */
typedef struct {
    const char *name;
    const char *suffix; /* picks the format for sd_csr_write */
    sd_status (*write)(const char *path);
} writer;

static sd_status w_csr(const char *path) { return sd_csr_write(path, &g_a); }
static sd_status w_perm(const char *path) { return sdi_perm_write(path, g_perm, N); }
static sd_status w_model(const char *path) { return sdi_model_write_file(path, g_text, strlen(g_text)); }

static const writer writers[] = {
    {"Matrix Market", ".mtx", w_csr},
    {"gzip Matrix Market", ".mtx.gz", w_csr},
    {".sdm", ".sdm", w_csr},
    {"permutation", ".perm", w_perm},
    {"model file", ".json", w_model},
};
#define NWRITERS ((int)(sizeof writers / sizeof writers[0]))

/* ------------------------------------------------------------------ output kinds */
typedef enum {
    K_NEW,
    K_MODE600,
    K_MODE640,
    K_READONLY,
    K_LINK,
    K_DANGLING_LINK,
    K_NO_DIR,
    K_IS_DIR,
    K_NULL,
    K_FULL,
    K_FIFO,
    K_FSIZE
} kind;

typedef struct {
    const char *name;
    kind k;
    sd_status status;
    const char *frag; /* in the message besides the path ("" when the write succeeds) */
} out_case;

static const out_case cases[] = {
    {"new file", K_NEW, SD_OK, ""},
    {"existing file, mode 600", K_MODE600, SD_OK, ""},
    {"existing file, mode 640", K_MODE640, SD_OK, ""},
    {"read-only file (444)", K_READONLY, SD_ERR_IO, "read-only"},
    {"symbolic link", K_LINK, SD_OK, ""},
    {"dangling symbolic link", K_DANGLING_LINK, SD_OK, ""},
    {"missing directory", K_NO_DIR, SD_ERR_IO, "No such file or directory"},
    {"a directory", K_IS_DIR, SD_ERR_IO, "Is a directory"},
    {"null device", K_NULL, SD_OK, ""},
    {"full device", K_FULL, SD_ERR_IO, "No space left on device"},
    {"FIFO", K_FIFO, SD_OK, ""},
    {"file-size limit", K_FSIZE, SD_ERR_IO, "File too large"},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static const char *const OLD = "the previous content\n";

static void put_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "wb");
    SDT_CHECK(f != NULL, "cannot create %s", path);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, mode);
}

static bool same_text(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* Any name in dir holding ".tmp." (a writer's temporary). */
static bool temporary_left(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return false;
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        found |= strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return found;
}

/* A character device 1:minor (3 null, 7 full) the test may lose: its own node as root,
 * the machine's one otherwise. "" when neither is usable (a nodev mount as root). */
static void device(const char *name, unsigned minor, char *out, size_t cap)
{
    out[0] = '\0';
    if (geteuid() == 0) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", g_dir, name);
        unlink(p);
        if (mknod(p, S_IFCHR | 0666, makedev(1, minor)) != 0)
            return;
        int fd = open(p, O_RDONLY);
        if (fd < 0)
            return;
        close(fd);
        snprintf(out, cap, "%s", p);
    } else {
        snprintf(out, cap, "/dev/%s", name);
    }
}

static void check_case(const writer *w, const out_case *c)
{
    char path[256], target[256], sub[128];
    snprintf(sub, sizeof sub, "%s/d", g_dir);
    mkdir(sub, 0755);
    snprintf(path, sizeof path, "%s/out%s", sub, w->suffix);
    snprintf(target, sizeof target, "%s/target%s", sub, w->suffix);
    int fifo_fd = -1;
    switch (c->k) {
    case K_NEW: break;
    case K_MODE600: put_file(path, OLD, 0600); break;
    case K_MODE640: put_file(path, OLD, 0640); break;
    case K_READONLY: put_file(path, OLD, 0444); break;
    case K_LINK:
        put_file(target, OLD, 0600);
        SDT_CHECK(symlink(target + strlen(sub) + 1, path) == 0, "symlink"); /* relative */
        break;
    case K_DANGLING_LINK: SDT_CHECK(symlink(target, path) == 0, "symlink"); break;
    case K_NO_DIR: snprintf(path, sizeof path, "%s/missing/out%s", sub, w->suffix); break;
    case K_IS_DIR: SDT_CHECK(mkdir(path, 0755) == 0, "mkdir"); break;
    case K_NULL: device("null", 3, path, sizeof path); break;
    case K_FULL: device("full", 7, path, sizeof path); break;
    case K_FIFO:
        SDT_CHECK(mkfifo(path, 0600) == 0, "mkfifo");
        /* A reader present (so the writer's open does not wait); it reads afterwards. */
        fifo_fd = open(path, O_RDONLY | O_NONBLOCK);
        break;
    case K_FSIZE: put_file(path, OLD, 0644); break;
    }
    if (path[0] == '\0') {
        printf("  skipped: %s / %s (no usable device node)\n", w->name, c->name);
        return;
    }
    struct rlimit old_limit;
    if (c->k == K_FSIZE) {
        /* Past the limit write() fails with EFBIG once SIGXFSZ is ignored. */
        signal(SIGXFSZ, SIG_IGN);
        getrlimit(RLIMIT_FSIZE, &old_limit);
        struct rlimit l = {FSIZE_LIMIT, old_limit.rlim_max};
        setrlimit(RLIMIT_FSIZE, &l);
    }
    long long live0 = sdi_alloc_live_bytes();
    sdi_error_clear();
    sd_status s = w->write(path);
    const char *m = sd_last_error();
    if (c->k == K_FSIZE)
        setrlimit(RLIMIT_FSIZE, &old_limit);
    SDT_CHECK(s == c->status, "%s / %s: got %s, expected %s: %s", w->name, c->name, sd_status_string(s),
              sd_status_string(c->status), m);
    if (c->status != SD_OK)
        SDT_CHECK(strstr(m, path) != NULL && strstr(m, c->frag) != NULL && strchr(m, '\n') == NULL,
                  "%s / %s: message '%s' lacks the path or '%s'", w->name, c->name, m, c->frag);
    SDT_CHECK(sdi_alloc_live_bytes() == live0, "%s / %s: leaked %lld bytes", w->name, c->name,
              sdi_alloc_live_bytes() - live0);
    SDT_CHECK(!temporary_left(sub), "%s / %s: a temporary file was left", w->name, c->name);
    struct stat st, lst;
    int have = stat(path, &st) == 0, lhave = lstat(path, &lst) == 0;
    switch (c->k) {
    case K_NEW:
        SDT_CHECK(have && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644 && st.st_size > 0,
                  "%s / %s: mode %o (umask 022 gives 644)", w->name, c->name, (unsigned)st.st_mode & 0777);
        break;
    case K_MODE600:
    case K_MODE640:
        SDT_CHECK(have && (st.st_mode & 0777) == (c->k == K_MODE600 ? 0600u : 0640u) && !same_text(path, OLD),
                  "%s / %s: mode became %o (or not rewritten)", w->name, c->name, (unsigned)st.st_mode & 0777);
        break;
    case K_READONLY:
    case K_FSIZE:
        SDT_CHECK(have && same_text(path, OLD) && (st.st_mode & 0777) == (c->k == K_READONLY ? 0444u : 0644u),
                  "%s / %s: the existing file was changed", w->name, c->name);
        break;
    case K_LINK:
    case K_DANGLING_LINK:
        SDT_CHECK(lhave && S_ISLNK(lst.st_mode), "%s / %s: the link was replaced", w->name, c->name);
        SDT_CHECK(stat(target, &st) == 0 && st.st_size > 0 && !same_text(target, OLD),
                  "%s / %s: the link's target was not written", w->name, c->name);
        if (c->k == K_LINK)
            SDT_CHECK((st.st_mode & 0777) == 0600, "%s / %s: the target's mode became %o", w->name, c->name,
                      (unsigned)st.st_mode & 0777);
        break;
    case K_NO_DIR: SDT_CHECK(!have, "%s / %s: created", w->name, c->name); break;
    case K_IS_DIR: SDT_CHECK(have && S_ISDIR(st.st_mode), "%s / %s: replaced", w->name, c->name); break;
    case K_NULL:
    case K_FULL:
        SDT_CHECK(lhave && S_ISCHR(lst.st_mode), "%s / %s: the device node was replaced", w->name, c->name);
        break;
    case K_FIFO: {
        SDT_CHECK(lhave && S_ISFIFO(lst.st_mode), "%s / %s: the FIFO was replaced", w->name, c->name);
        char buf[4096];
        ssize_t n = fifo_fd >= 0 ? read(fifo_fd, buf, sizeof buf) : -1;
        SDT_CHECK(n > 0, "%s / %s: nothing came through the FIFO", w->name, c->name);
        break;
    }
    }
    if (fifo_fd >= 0)
        close(fifo_fd);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", sub);
    SDT_CHECK(system(cmd) == 0, "rm");
}

static void test_table(void)
{
    for (int wi = 0; wi < NWRITERS; wi++)
        for (int k = 0; k < NCASES; k++)
            check_case(&writers[wi], &cases[k]);
}

/* The routine directly: a descriptor path writes in place through the process's own
 * descriptor (appending where it was opened to append), and a stream's write error is
 * reported by the commit, with nothing left behind. */
static void test_descriptor_and_stream(void)
{
    char path[128], fdpath[64];
    snprintf(path, sizeof path, "%s/appended.txt", g_dir);
    put_file(path, "first\n", 0644);
    int fd = open(path, O_WRONLY | O_APPEND);
    SDT_CHECK(fd >= 0, "open");
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fd);
    SDT_OK(sdi_write_file(fdpath, "second\n", 7));
    SDT_CHECK(fcntl(fd, F_GETFD) >= 0, "the caller's descriptor was closed");
    close(fd);
    SDT_CHECK(same_text(path, "first\nsecond\n"), "not appended through the descriptor");

    char full[128];
    device("full", 7, full, sizeof full);
    if (full[0] != '\0') {
        sdi_atomic_file af;
        SDT_OK(sdi_atomic_begin(&af, full));
        FILE *f = sdi_atomic_stream(&af);
        SDT_CHECK(f != NULL, "stream");
        if (f != NULL)
            for (int i = 0; i < 1000; i++)
                fprintf(f, "line %d\n", i);
        SDT_STATUS(sdi_atomic_commit(&af), SD_ERR_IO);
        SDT_CHECK(strstr(sd_last_error(), "No space left on device") != NULL, "%s", sd_last_error());
        sdi_atomic_abort(&af); /* after a failed commit: nothing left to do, no crash */
    }
    SDT_STATUS(sdi_write_file("", "x", 1), SD_ERR_INVALID_ARG);
}

/* A name without a folder is in the current one: a failure names it '.' (/proc takes no
 * new files, even from root); a success writes it there. */
static void test_relative_name(void)
{
    char cwd[512];
    SDT_CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    if (chdir("/proc") == 0) {
        SDT_STATUS(sd_csr_write("x.mtx", &g_a), SD_ERR_IO);
        SDT_CHECK(strstr(sd_last_error(), "cannot write 'x.mtx': cannot create a file in '.'") != NULL, "%s",
                  sd_last_error());
    }
    SDT_CHECK(chdir(g_dir) == 0, "chdir");
    SDT_OK(sd_csr_write("relative.sdm", &g_a));
    SDT_CHECK(access("relative.sdm", F_OK) == 0 && !temporary_left("."), "relative.sdm");
    SDT_CHECK(chdir(cwd) == 0, "chdir back");
}

int main(void)
{
    sdt_init("test_out_bad");
    umask(022);
    snprintf(g_dir, sizeof g_dir, "/tmp/sd_test_out_bad_XXXXXX");
    if (mkdtemp(g_dir) == NULL)
        return sdt_skip("mkdtemp failed");
    SDT_OK(sdi_csr_alloc(&g_a, N, N, N));
    for (int i = 0; i < N; i++) {
        g_a.rowptr[i + 1] = i + 1;
        g_a.colind[i] = (N - 1 - i) % N;
        g_a.vals[i] = 0.37f * (float)(i + 1);
        g_perm[i] = N - 1 - i;
    }
    for (size_t i = 0; i + 1 < sizeof g_text; i++)
        g_text[i] = (char)('a' + (i * 7) % 26);
    SDT_RUN(test_table);
    SDT_RUN(test_descriptor_and_stream);
    SDT_RUN(test_relative_name);
    sd_csr_free(&g_a);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", g_dir);
    return sdt_finish();
}
