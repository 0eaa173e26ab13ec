// Linux calls that Swift's Glibc module does not import (it is built without _GNU_SOURCE), in
// fixed-layout wrappers, each named after the facility it wraps: epoll(7) (`clinux_epoll_*`)
// and eventfd(2) for the HTTP event loops (`struct epoll_event` is packed on x86-64, so events
// come back as (id, event bits) pairs), thread names, preadv2(2) with RWF_NOWAIT for the disk
// cache's page-cache-only reads, sealed memfds for the memory cache, inotify(7) for
// `LibraryWatch`, and renameat2(2) with RENAME_NOREPLACE for the disk cache.
#ifndef CLINUX_H
#define CLINUX_H

#include <stdint.h>
#include <sys/types.h>

/// Event bits, as in <sys/epoll.h>.
extern const uint32_t clinux_epoll_in, clinux_epoll_out, clinux_epoll_err, clinux_epoll_hup;

/// `epoll_create1(EPOLL_CLOEXEC)`: a descriptor, or -1 with errno set.
int clinux_epoll_create(void);

/// `epoll_ctl(epfd, ADD/MOD, fd)` with `events` and `id` as the event's data. 0, or -1 with errno.
int clinux_epoll_add(int epfd, int fd, uint32_t events, uint64_t id);
int clinux_epoll_modify(int epfd, int fd, uint32_t events, uint64_t id);

/// `epoll_wait` for up to `capacity` events, each returned as `ids[i]` and `events[i]`.
/// Returns the count, or -1 with errno set (EINTR included).
int clinux_epoll_wait(int epfd, uint64_t *ids, uint32_t *events, int capacity, int timeout_ms);

/// Whether a descriptor registered with epoll instance `epfd` is ready now (`epoll_wait` for one
/// event with a zero timeout, which looks at the instance's ready list without waiting): 1 or 0,
/// or -1 with errno set. `LibraryWatch`'s probe of the shared inotify queue on a hit.
int clinux_epoll_ready(int epfd);

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

// MARK: inotify(7), for LibraryWatch

/// Event bits as inotify(7) names them: the event is about a directory, the queue overflowed
/// (events were lost), the watch was removed, the watched directory itself was moved, an
/// entry's metadata (mode, owner, times) changed.
extern const uint32_t clinux_inotify_isdir, clinux_inotify_overflow, clinux_inotify_ignored,
                      clinux_inotify_create, clinux_inotify_moved_from, clinux_inotify_moved_to,
                      clinux_inotify_move_self, clinux_inotify_delete_self, clinux_inotify_attrib;

/// A non-blocking, close-on-exec inotify instance: the descriptor, or -1 with errno set.
int clinux_inotify(void);

/// Watches directory `path` (not followed when a symlink) for what changes a file's content,
/// metadata or name: IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_CREATE, IN_DELETE, IN_MOVED_FROM,
/// IN_MOVED_TO, IN_DELETE_SELF, IN_MOVE_SELF; not reads or opens. The watch descriptor (the
/// same one when the directory is already watched), or -1 with errno set (ENOSPC: the
/// fs.inotify.max_user_watches limit).
int clinux_inotify_watch_directory(int fd, const char *path);

/// Bytes waiting to be read on `fd` (ioctl FIONREAD): events queued on an inotify descriptor,
/// or data received on a socket. -1 with errno set.
int clinux_unread_bytes(int fd);

/// Stops watch `wd` of inotify descriptor `fd` (inotify_rm_watch); 0, or -1 with errno set.
int clinux_inotify_unwatch(int fd, int wd);

// MARK: files, for the disk cache

/// `renameat2(from, to, RENAME_NOREPLACE)`: moves `from` to `to` only when nothing exists at
/// `to` (atomically; EEXIST otherwise), so the disk cache never replaces a file it has not
/// checked is its own. 0, or -1 with errno set.
int clinux_rename_noreplace(const char *from, const char *to);

#endif
