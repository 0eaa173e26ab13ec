// Fixed-layout wrappers around epoll(7) and eventfd(2) for the HTTP module's event loops.
// `struct epoll_event` is packed on x86-64, which Swift's Glibc module does not import, so the
// loop sees events through these functions as (id, event bits) pairs instead.
#ifndef CEPOLL_H
#define CEPOLL_H

#include <stdint.h>

/// Event bits, as in <sys/epoll.h>.
extern const uint32_t cepoll_in, cepoll_out, cepoll_err, cepoll_hup, cepoll_rdhup;

/// `epoll_create1(EPOLL_CLOEXEC)`: a descriptor, or -1 with errno set.
int cepoll_create(void);

/// `epoll_ctl(epfd, ADD/MOD, fd)` with `events` and `id` as the event's data. 0, or -1 with errno.
int cepoll_add(int epfd, int fd, uint32_t events, uint64_t id);
int cepoll_modify(int epfd, int fd, uint32_t events, uint64_t id);

/// `epoll_wait` for up to `capacity` events, each returned as `ids[i]` and `events[i]`.
/// Returns the count, or -1 with errno set (EINTR included).
int cepoll_wait(int epfd, uint64_t *ids, uint32_t *events, int capacity, int timeout_ms);

/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`: a descriptor, or -1 with errno set.
int cepoll_eventfd(void);

/// Adds 1 to an eventfd's counter (wakes its reader). 0, or -1 with errno.
int cepoll_eventfd_signal(int fd);

/// Reads and clears an eventfd's counter. 0, or -1 with errno (EAGAIN when it was 0).
int cepoll_eventfd_drain(int fd);

/// Names the calling thread (at most 15 bytes are kept), as `top -H` and `ps -L` show it.
void cepoll_name_thread(const char *name);

#endif
