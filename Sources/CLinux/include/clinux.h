// Linux calls that Swift's Glibc module does not import (it is built without _GNU_SOURCE), in
// fixed-layout wrappers: epoll(7) and eventfd(2) for the HTTP event loops (`struct epoll_event`
// is packed on x86-64, so events come back as (id, event bits) pairs), thread names, and
// preadv2(2) with RWF_NOWAIT for the disk cache's page-cache-only reads, and sealed memfds for
// the memory cache.
#ifndef CLINUX_H
#define CLINUX_H

#include <stdint.h>
#include <sys/types.h>

/// Event bits, as in <sys/epoll.h>.
extern const uint32_t clinux_in, clinux_out, clinux_err, clinux_hup, clinux_rdhup;

/// `epoll_create1(EPOLL_CLOEXEC)`: a descriptor, or -1 with errno set.
int clinux_create(void);

/// `epoll_ctl(epfd, ADD/MOD, fd)` with `events` and `id` as the event's data. 0, or -1 with errno.
int clinux_add(int epfd, int fd, uint32_t events, uint64_t id);
int clinux_modify(int epfd, int fd, uint32_t events, uint64_t id);

/// `epoll_wait` for up to `capacity` events, each returned as `ids[i]` and `events[i]`.
/// Returns the count, or -1 with errno set (EINTR included).
int clinux_wait(int epfd, uint64_t *ids, uint32_t *events, int capacity, int timeout_ms);

/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`: a descriptor, or -1 with errno set.
int clinux_eventfd(void);

/// Adds 1 to an eventfd's counter (wakes its reader). 0, or -1 with errno.
int clinux_eventfd_signal(int fd);

/// Reads and clears an eventfd's counter. 0, or -1 with errno (EAGAIN when it was 0).
int clinux_eventfd_drain(int fd);

/// Names the calling thread (at most 15 bytes are kept), as `top -H` and `ps -L` show it.
void clinux_name_thread(const char *name);

/// Reads `head_length` bytes into `head`, then `body_length` into `body`, from offset 0 of `fd`
/// with one preadv2(2) call. With `nowait` set, only from the page cache (RWF_NOWAIT): -1 with
/// errno EAGAIN when that would mean waiting for the disk. Returns the bytes read (may be short),
/// or -1 with errno set.
ssize_t clinux_read_two(int fd, void *head, size_t head_length, void *body, size_t body_length, int nowait);

/// A sealed memfd holding `length` bytes from `bytes` (memfd_create with MFD_CLOEXEC, write,
/// then F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL: its content can never change,
/// so pages handed to sockets by sendfile(2) stay what they were). The descriptor, or -1 with
/// errno set.
int clinux_sealed_memfd(const char *name, const void *bytes, size_t length);

#endif
