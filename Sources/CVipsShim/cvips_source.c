/*
 * Opening a source file with care.
 *
 * Why this exists: libvips opens names with a blocking open(2) (a FIFO would hang the render
 * thread until a writer appears) and parses a trailing "[...]" in a name as load options. The
 * shim opens the file once, non-blocking, checks it is a non-empty regular file, and hands
 * libvips only the descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cvips_internal.h"

#define CVIPS_OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

static int checked_source(int fd, cvips_failure *failure);

int
cvips_source_open(const char *path, cvips_failure *failure)
{
    return checked_source(open(path, CVIPS_OPEN_FLAGS), failure);
}

/* Whether the file open on `fd` is at `path` itself: /proc/self/fd/N names the file reached. */
static int
opened_at(int fd, const char *path)
{
    char link[64], target[4096];
    ssize_t n;

    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof target);
    return n > 0 && (size_t) n < sizeof target && (size_t) n == strlen(path) && memcmp(target, path, (size_t) n) == 0;
}

int
cvips_source_open_resolved(const char *path, cvips_failure *failure)
{
    struct open_how how;
    int fd;

    memset(&how, 0, sizeof how);
    how.flags = CVIPS_OPEN_FLAGS;
    how.resolve = RESOLVE_NO_SYMLINKS;
    fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0 && errno == ENOSYS) {
        fd = open(path, CVIPS_OPEN_FLAGS);
        if (fd >= 0 && !opened_at(fd, path)) {
            close(fd);
            fd = -1;
            errno = ELOOP;
        }
    }
    if (fd < 0 && errno == ELOOP) {
        failure->status = CVIPS_MOVED;
        g_strlcpy(failure->message, "a symlink is now on the way to the source", CVIPS_MESSAGE_SIZE);
        return -1;
    }
    return checked_source(fd, failure);
}

/* The checks of a freshly opened `fd` (or the open's failure, when fd < 0). */
static int
checked_source(int fd, cvips_failure *failure)
{
    struct stat st;
    int flags;

    if (fd < 0) {
        int e = errno;

        if (e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG)
            return cvips_fail_errno(failure, CVIPS_NOT_FOUND, "the source does not exist", e);
        if (e == ENXIO)   /* a socket or a device without a driver */
            return cvips_fail_errno(failure, CVIPS_UNSUPPORTED, "the source is not a file", e);
        if (e == EACCES || e == EPERM)
            return cvips_fail_errno(failure, CVIPS_DENIED, "the source cannot be read by the server", e);
        if (e == EMFILE || e == ENFILE)
            return cvips_fail_errno(failure, CVIPS_NO_DESCRIPTORS, "no file descriptor is free to open the source", e);
        return cvips_fail_errno(failure, CVIPS_INTERNAL, "cannot open the source", e);
    }

    if (fstat(fd, &st) != 0) {
        int e = errno;

        close(fd);
        return cvips_fail_errno(failure, CVIPS_INTERNAL, "cannot stat the source", e);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        failure->status = CVIPS_UNSUPPORTED;
        g_strlcpy(failure->message,
            "the source is not a regular file (a directory, FIFO or device)",
            CVIPS_MESSAGE_SIZE);
        return -1;
    }
    if (st.st_size == 0) {
        close(fd);
        failure->status = CVIPS_UNSUPPORTED;
        g_strlcpy(failure->message, "the source is empty (0 bytes)", CVIPS_MESSAGE_SIZE);
        return -1;
    }

    /* Regular files never block; drop O_NONBLOCK so libvips sees ordinary reads. */
    flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);

    return fd;
}

VipsSource *
cvips_source_at_start(int fd, cvips_failure *failure)
{
    VipsSource *source;

    if (lseek(fd, 0, SEEK_SET) != 0) {
        cvips_fail_errno(failure, CVIPS_INTERNAL, "cannot rewind the source", errno);
        return NULL;
    }
    if (!(source = vips_source_new_from_descriptor(fd))) {
        cvips_fail(failure, CVIPS_INTERNAL, "cannot read the source");
        return NULL;
    }
    /* libvips reads through a dup(2) of `fd`, made without checking it: -1 when no descriptor
     * was free (EMFILE, ENFILE), and every read would then fail as if the file were damaged. */
    if (VIPS_CONNECTION(source)->descriptor < 0) {
        VIPS_UNREF(source);
        failure->status = CVIPS_NO_DESCRIPTORS;
        g_strlcpy(failure->message, "no file descriptor is free to read the source", CVIPS_MESSAGE_SIZE);
        return NULL;
    }

    return source;
}
