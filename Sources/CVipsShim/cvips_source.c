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
#include <sys/stat.h>
#include <unistd.h>

#include "cvips_internal.h"

int
cvips_source_open(const char *path, cvips_failure *failure)
{
    struct stat st;
    int fd;
    int flags;

    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;

        if (e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG)
            return cvips_fail_errno(failure, CVIPS_NOT_FOUND, "the source does not exist", e);
        if (e == ENXIO)   /* a socket or a device without a driver */
            return cvips_fail_errno(failure, CVIPS_UNSUPPORTED, "the source is not a file", e);
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

    return source;
}
