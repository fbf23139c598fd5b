/* src/core/out_file.c: the one routine that writes a file a user names (matrices,
 * permutations, models, reports) or the cache writes (io.h, "output files"). What the path
 * is decides how: a regular file is replaced atomically and keeps its permission bits, a
 * symbolic link is followed, a device, FIFO or descriptor is written in place. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io.h"

#define SDI_MAX_LINK_HOPS 40 /* as the kernel's own limit (ELOOP) */

static atomic_ulong g_tmp_counter;

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = sdi_malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* The descriptor a path stands for rather than a file: /dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N; -1 for any other path. Writing through the descriptor the
 * process already holds keeps what the shell set up (its offset, `>>` appending), where
 * reopening would truncate, replace the file it names, or fail (a pipe's link names no
 * file). */
static int descriptor_path(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0)
        return STDERR_FILENO;
    const char *num = NULL;
    if (strncmp(path, "/dev/fd/", 8) == 0)
        num = path + 8;
    else if (strncmp(path, "/proc/self/fd/", 14) == 0)
        num = path + 14;
    if (num == NULL || *num < '0' || *num > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(num, &end, 10);
    return *end == '\0' && errno == 0 && v <= INT_MAX ? (int)v : -1;
}

/* Length of path's directory part including the last '/' (0: the current directory). */
static size_t dir_length(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? (size_t)(slash - path) + 1 : 0;
}

/* path's directory as a name of its own: "." for none, "/" for the root. */
static void dir_name(const char *path, char *out, size_t cap)
{
    size_t dl = dir_length(path);
    if (dl == 0)
        snprintf(out, cap, ".");
    else
        snprintf(out, cap, "%.*s", dl > 1 ? (int)dl - 1 : 1, path);
}

static void release(sdi_atomic_file *af)
{
    sdi_free(af->tmp_path);
    sdi_free(af->dest_path);
    sdi_free(af->final_path);
    af->tmp_path = af->dest_path = af->final_path = NULL;
    af->f = NULL;
    af->fd = -1;
}

void sdi_atomic_abort(sdi_atomic_file *af)
{
    if (af == NULL)
        return;
    if (af->f != NULL) {
        af->discard = true; /* what the stream still buffers goes nowhere */
        fclose(af->f);
    }
    if (af->fd >= 0)
        close(af->fd);
    /* In place there is nothing to undo: what reached a device or a pipe is gone. */
    if (af->tmp_path != NULL)
        unlink(af->tmp_path);
    release(af);
}

static sd_status fail(sdi_atomic_file *af, int e, const char *what)
{
    sd_status s = what != NULL
                      ? SDI_ERR(SD_ERR_IO, "cannot write '%s': %s: %s", af->final_path, what, strerror(e))
                      : SDI_ERR(SD_ERR_IO, "cannot write '%s': %s", af->final_path, strerror(e));
    sdi_atomic_abort(af);
    return s;
}

/* Follows the symbolic links from af->final_path to the name a rename must replace (which
 * may not exist yet: a new file, or a dangling link's target); into af->dest_path. A link
 * to a descriptor path ends the walk with *fd_path set to it. */
static sd_status resolve_links(sdi_atomic_file *af, int *fd_path)
{
    char cur[PATH_MAX], target[PATH_MAX];
    *fd_path = -1;
    if (snprintf(cur, sizeof cur, "%s", af->final_path) >= (int)sizeof cur)
        return fail(af, ENAMETOOLONG, NULL);
    for (int hops = 0;; hops++) {
        if (hops > 0 && (*fd_path = descriptor_path(cur)) >= 0)
            return SD_OK;
        struct stat ls;
        if (lstat(cur, &ls) != 0) {
            if (errno != ENOENT)
                return fail(af, errno, NULL);
            break;
        }
        if (!S_ISLNK(ls.st_mode))
            break;
        if (hops == SDI_MAX_LINK_HOPS)
            return fail(af, ELOOP, NULL);
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0)
            return fail(af, errno, NULL);
        target[n] = '\0';
        /* A relative target is relative to the link's directory. */
        size_t dl = target[0] == '/' ? 0 : dir_length(cur);
        if (dl + (size_t)n >= sizeof cur)
            return fail(af, ENAMETOOLONG, NULL);
        memmove(cur + dl, target, (size_t)n + 1);
    }
    af->dest_path = dup_string(cur);
    if (af->dest_path == NULL) {
        sdi_atomic_abort(af);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a file name");
    }
    return SD_OK;
}

/* Writes in place through a descriptor of the process (a copy, so closing it keeps the
 * caller's). */
static sd_status begin_descriptor(sdi_atomic_file *af, int fd)
{
    af->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    return af->fd >= 0 ? SD_OK : fail(af, errno, NULL);
}

/* A character or block device, a FIFO: opened and written where it is (a FIFO waits for
 * its reader), never replaced by a regular file. */
static sd_status begin_in_place(sdi_atomic_file *af, const struct stat *st)
{
    if (S_ISDIR(st->st_mode))
        return fail(af, EISDIR, NULL);
    if (S_ISSOCK(st->st_mode))
        return fail(af, ENXIO, "a socket is not written by name");
    af->fd = open(af->final_path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    return af->fd >= 0 ? SD_OK : fail(af, errno, NULL);
}

sd_status sdi_atomic_begin(sdi_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    af->fd = -1;
    if (path == NULL || path[0] == '\0')
        return SDI_ERR(SD_ERR_INVALID_ARG, "no output file named (the path is empty)");
    af->final_path = dup_string(path);
    if (af->final_path == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a file name");
    int fd = descriptor_path(path);
    if (fd >= 0)
        return begin_descriptor(af, fd);
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return begin_in_place(af, &st);
    } else if (errno != ENOENT) {
        return fail(af, errno, NULL);
    }
    /* A regular file or a new name (possibly a dangling link's target). */
    sd_status s = resolve_links(af, &fd);
    if (s != SD_OK)
        return s; /* af released */
    if (fd >= 0)
        return begin_descriptor(af, fd);
    bool exists = stat(af->dest_path, &st) == 0 && S_ISREG(st.st_mode);
    if (exists) {
        /* rename() replaces a file whatever its mode, so a file nobody may write (0444)
         * would be overwritten where `>` refuses. It is refused by its mode, root included
         * (root passes every access check); another user's file by the access check. */
        if ((st.st_mode & 0222) == 0)
            return fail(af, EACCES, "the file is read-only");
        if (faccessat(AT_FDCWD, af->dest_path, W_OK, AT_EACCESS) != 0)
            return fail(af, errno, NULL);
    }
    /* A unique name in the destination's directory (rename is atomic only within one file
     * system), the base name shortened so the suffix fits NAME_MAX; O_EXCL never reuses
     * someone else's file. */
    size_t n = strlen(af->dest_path), dl = dir_length(af->dest_path);
    af->tmp_path = sdi_malloc(n + 64);
    if (af->tmp_path == NULL) {
        sdi_atomic_abort(af);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a file name");
    }
    /* An existing file's replacement starts private and gets its mode below; a new file
     * gets 0666 less the umask like any other. */
    mode_t create_mode = exists ? 0600 : 0666;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int e = EEXIST;
    for (int attempt = 0; attempt < 64 && e == EEXIST; attempt++) {
        unsigned long k = atomic_fetch_add(&g_tmp_counter, 1);
        snprintf(af->tmp_path, n + 64, "%.*s%.200s.tmp.%ld.%lu.%lx", (int)dl, af->dest_path,
                 af->dest_path + dl, (long)getpid(), k,
                 (unsigned long)ts.tv_nsec ^ ((unsigned long)attempt << 20));
        af->fd = open(af->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, create_mode);
        e = af->fd >= 0 ? 0 : errno;
    }
    if (e != 0) {
        char dir[PATH_MAX], where[PATH_MAX + 64];
        dir_name(af->dest_path, dir, sizeof dir);
        snprintf(where, sizeof where, "cannot create a file in '%s'", dir);
        sdi_free(af->tmp_path); /* never created: nothing to remove */
        af->tmp_path = NULL;
        return fail(af, e, where);
    }
    if (exists) {
        mode_t mode = st.st_mode & 0777;
        /* The owner and group stay where allowed (root; a group the writer belongs to).
         * When the group cannot, its bits are dropped rather than handed to the writer's
         * group. A failed fchmod leaves the private 0600: narrower, never wider. */
        if (fchown(af->fd, st.st_uid, st.st_gid) != 0 && fchown(af->fd, (uid_t)-1, st.st_gid) != 0)
            mode &= ~(mode_t)0070;
        int ignored = fchmod(af->fd, mode);
        (void)ignored;
    }
    return SD_OK;
}

/* Every byte goes through here, so the first error's cause is kept: a stdio stream keeps
 * only "an error happened", and by the commit errno may say something else or nothing. */
static sd_status write_all(sdi_atomic_file *af, const char *p, size_t len)
{
    while (len > 0 && af->err == 0) {
        ssize_t w = write(af->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            af->err = w < 0 ? errno : EIO;
        else
            p += w, len -= (size_t)w;
    }
    return af->err == 0 ? SD_OK : SD_ERR_IO;
}

static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
    sdi_atomic_file *af = cookie;
    if (af->discard)
        return (ssize_t)size;
    return write_all(af, buf, size) == SD_OK ? (ssize_t)size : 0; /* 0: the stream's error */
}

FILE *sdi_atomic_stream(sdi_atomic_file *af)
{
    if (af->f == NULL && af->fd >= 0) {
        /* The descriptor stays af's: the stream only writes through it. */
        cookie_io_functions_t io = {NULL, stream_write, NULL, NULL};
        af->f = fopencookie(af, "w", io);
    }
    return af->f;
}

sd_status sdi_atomic_write(sdi_atomic_file *af, const void *data, size_t len)
{
    if (af->f != NULL) {
        if (len > 0 && fwrite(data, 1, len, af->f) != len)
            return fail(af, af->err != 0 ? af->err : EIO, NULL);
        return SD_OK;
    }
    return write_all(af, data, len) == SD_OK ? SD_OK : fail(af, af->err, NULL);
}

sd_status sdi_atomic_commit(sdi_atomic_file *af)
{
    int e = 0;
    if (af->f != NULL) {
        bool bad = fflush(af->f) != 0 || ferror(af->f);
        fclose(af->f); /* nothing left to write: it cannot fail now */
        af->f = NULL;
        if (bad)
            e = af->err != 0 ? af->err : EIO;
    }
    /* The data reaches the disk before the rename makes it visible; devices and pipes
     * (in place) have nothing to flush. */
    if (e == 0 && af->tmp_path != NULL && !af->no_sync && fsync(af->fd) != 0 && errno != EINVAL &&
        errno != EROFS)
        e = errno;
    int rc = close(af->fd);
    if (e == 0 && rc != 0)
        e = errno;
    af->fd = -1;
    if (e == 0 && af->tmp_path != NULL && rename(af->tmp_path, af->dest_path) != 0)
        e = errno;
    if (e != 0)
        return fail(af, e, NULL);
    if (af->tmp_path != NULL && !af->no_sync) {
        /* The rename reaches the disk with its directory. Best effort: the file is complete
         * under its name already, and some file systems refuse fsync on a directory. */
        char dir[PATH_MAX];
        dir_name(af->dest_path, dir, sizeof dir);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            int ignored = fsync(dfd);
            (void)ignored;
            close(dfd);
        }
    }
    sdi_free(af->tmp_path); /* renamed: no longer ours to remove */
    af->tmp_path = NULL;
    release(af);
    return SD_OK;
}

sd_status sdi_write_file(const char *path, const void *data, size_t len)
{
    sdi_atomic_file af;
    sd_status s = sdi_atomic_begin(&af, path);
    if (s == SD_OK)
        s = sdi_atomic_write(&af, data, len); /* releases af on failure */
    return s == SD_OK ? sdi_atomic_commit(&af) : s;
}
