#define _GNU_SOURCE
#include "clinux.h"

#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

const uint32_t clinux_epoll_in = EPOLLIN, clinux_epoll_out = EPOLLOUT, clinux_epoll_err = EPOLLERR, clinux_epoll_hup = EPOLLHUP;

int clinux_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static int control(int epfd, int op, int fd, uint32_t events, uint64_t id) {
    struct epoll_event event = { .events = events, .data = { .u64 = id } };
    return epoll_ctl(epfd, op, fd, &event);
}

int clinux_epoll_add(int epfd, int fd, uint32_t events, uint64_t id) { return control(epfd, EPOLL_CTL_ADD, fd, events, id); }

int clinux_epoll_modify(int epfd, int fd, uint32_t events, uint64_t id) { return control(epfd, EPOLL_CTL_MOD, fd, events, id); }

int clinux_epoll_wait(int epfd, uint64_t *ids, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event buffer[256];
    if (capacity > 256) capacity = 256;
    int n = epoll_wait(epfd, buffer, capacity, timeout_ms);
    for (int i = 0; i < n; i++) {
        ids[i] = buffer[i].data.u64;
        events[i] = buffer[i].events;
    }
    return n;
}

int clinux_epoll_ready(int epfd) {
    struct epoll_event event;
    return epoll_wait(epfd, &event, 1, 0);
}

int clinux_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int clinux_eventfd_signal(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

int clinux_eventfd_drain(int fd) {
    uint64_t value;
    return read(fd, &value, sizeof value) == sizeof value ? 0 : -1;
}

void clinux_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

ssize_t clinux_read_two(int fd, void *head, size_t head_length, void *body, size_t body_length, int nowait) {
    struct iovec parts[2] = { { head, head_length }, { body, body_length } };
    return preadv2(fd, parts, 2, 0, nowait ? RWF_NOWAIT : 0);
}

int
clinux_sealed_memfd(const char *name, const void *bytes, size_t length)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    size_t done = 0;

    if (fd < 0)
        return -1;
    while (done < length) {
        ssize_t n = write(fd, (const char *) bytes + done, length - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        done += (size_t) n;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

const uint32_t clinux_inotify_isdir = IN_ISDIR, clinux_inotify_overflow = IN_Q_OVERFLOW,
               clinux_inotify_ignored = IN_IGNORED, clinux_inotify_create = IN_CREATE,
               clinux_inotify_moved_from = IN_MOVED_FROM, clinux_inotify_moved_to = IN_MOVED_TO,
               clinux_inotify_move_self = IN_MOVE_SELF, clinux_inotify_delete_self = IN_DELETE_SELF,
               clinux_inotify_attrib = IN_ATTRIB;

int clinux_inotify(void) { return inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }

int
clinux_inotify_watch_directory(int fd, const char *path)
{
    return inotify_add_watch(fd, path,
                             IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM
                                 | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW);
}

int
clinux_unread_bytes(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

int clinux_inotify_unwatch(int fd, int wd) { return inotify_rm_watch(fd, wd); }

int clinux_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

