/* src/core/input.c: a matrix input opened once and read front to back: regular files,
 * pipes, FIFOs, process substitutions and standard input ("-") alike. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

void sdi_input_close(sdi_input *in)
{
    if (in == NULL)
        return;
    if (in->own_fd && in->fd >= 0)
        close(in->fd);
    memset(in, 0, sizeof *in);
    in->fd = -1;
}

/* Reads n bytes straight from the descriptor, fewer only at its end. */
static sd_status fd_read_full(sdi_input *in, unsigned char *dst, size_t n, size_t *got)
{
    size_t done = 0;
    while (done < n && !in->eof) {
        size_t want = n - done;
        if (want > (1u << 30))
            want = 1u << 30;
        ssize_t k = read(in->fd, dst + done, want);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            *got = done;
            return SDI_ERR(SD_ERR_IO, "read error: %s", strerror(errno));
        }
        if (k == 0) {
            in->eof = true; /* a terminal would block again on the next read */
            break;
        }
        done += (size_t)k;
    }
    *got = done;
    return SD_OK;
}

sd_status sdi_input_open(sdi_input *in, const char *path)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    if (path == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "path is NULL");
    if (strcmp(path, "-") == 0) {
        in->fd = STDIN_FILENO;
        in->name = "standard input";
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0)
            return SDI_ERR(SD_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
        in->own_fd = true;
        in->name = path;
    }
    const char *name = in->name;
    struct stat sb;
    if (fstat(in->fd, &sb) != 0) {
        int e = errno;
        sdi_input_close(in);
        return SDI_ERR(SD_ERR_IO, "cannot read '%s': %s", name, strerror(e));
    }
    if (S_ISDIR(sb.st_mode)) {
        sdi_input_close(in);
        return SDI_ERR(SD_ERR_IO, "cannot read '%s': it is a directory", name);
    }
    if (S_ISREG(sb.st_mode)) {
        /* Standard input may be a file already partly read: what is left counts. */
        off_t at = lseek(in->fd, 0, SEEK_CUR);
        in->regular = true;
        in->size = (int64_t)sb.st_size - (at > 0 ? (int64_t)at : 0);
        if (in->size < 0)
            in->size = 0;
    } else {
        in->stream_kind = S_ISFIFO(sb.st_mode)   ? "a pipe"
                          : S_ISCHR(sb.st_mode)  ? "a character device"
                          : S_ISSOCK(sb.st_mode) ? "a socket"
                                                 : "a stream";
    }
    /* The format is recognised by the first bytes, read here once: a pipe cannot be
     * rewound, so they are handed out again by sdi_input_read. */
    sd_status s = fd_read_full(in, in->head, sizeof in->head, &in->head_len);
    if (s != SD_OK) {
        sdi_input_close(in);
        sdi_error_prefix("%s", name);
    }
    return s;
}

sd_status sdi_input_read(sdi_input *in, void *dst, size_t n, size_t *got)
{
    unsigned char *d = dst;
    size_t from_head = in->head_len - in->head_pos;
    if (from_head > n)
        from_head = n;
    memcpy(d, in->head + in->head_pos, from_head);
    in->head_pos += from_head;
    size_t more = 0;
    sd_status s = SD_OK;
    if (from_head < n)
        s = fd_read_full(in, d + from_head, n - from_head, &more);
    *got = from_head + more;
    return s;
}
