/*
 * The video helper process and its transport: one request (limits and a descriptor passed with
 * SCM_RIGHTS) and one answer (a fixed header, then the frame's bytes) at a time, over a
 * socketpair.
 *
 * Why this exists: FFmpeg's decoders have a long CVE history. thumbd decodes posters in a
 * child it starts and keeps (the same binary, run with a hidden argument), so that a crash,
 * a hang or a runaway allocation in a codec costs one render, never the server.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cvideo_internal.h"

extern char **environ;

/* The helper's descriptor for its end of the socket. */
#define CVIDEO_HELPER_FD 3

/* The answer's fixed part; `length` bytes of pixels follow when `status` is CVIDEO_OK. */
typedef struct {
    int32_t status;
    int32_t width, height, rotation;
    int64_t time_ms;
    uint64_t length;
    char message[CVIDEO_MESSAGE_SIZE];
} cvideo_answer;

static int
cvideo_errno(cvideo_failure *failure, cvideo_status status, const char *what)
{
    failure->status = status;
    snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "%s: %s", what, strerror(errno));
    return -1;
}

int
cvideo_helper_spawn(const char *executable, const char *argument, pid_t *pid, cvideo_failure *failure)
{
    int ends[2], error;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    sigset_t none, defaults;
    char *argv[3] = { (char *) executable, (char *) argument, NULL };

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
        return cvideo_errno(failure, CVIDEO_INTERNAL, "cannot make the video helper's socket");
    /* dup2 onto itself would keep close-on-exec: move the child's end off 3 first. */
    if (ends[1] == CVIDEO_HELPER_FD) {
        int moved = fcntl(ends[1], F_DUPFD_CLOEXEC, CVIDEO_HELPER_FD + 1);

        close(ends[1]);
        ends[1] = moved;
    }
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, ends[1], CVIDEO_HELPER_FD);
    posix_spawn_file_actions_addclosefrom_np(&actions, CVIDEO_HELPER_FD + 1);
    /* The server ignores SIGINT, SIGTERM and SIGPIPE; the helper takes the defaults back (and
     * SIGALRM's, which ends a decode that hangs: cvideo_helper_serve). */
    posix_spawnattr_init(&attributes);
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGALRM);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    error = posix_spawn(pid, executable, &actions, &attributes, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(ends[1]);
    if (error != 0) {
        close(ends[0]);
        errno = error;
        return cvideo_errno(failure, CVIDEO_INTERNAL, "cannot start the video helper");
    }
    return ends[0];
}

/* Writes all of `bytes`; 0, or -1 with errno set. */
static int
cvideo_write_all(int socket, const void *bytes, size_t length)
{
    const char *p = bytes;

    while (length > 0) {
        ssize_t n = send(socket, p, length, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        length -= (size_t) n;
    }
    return 0;
}

/* Reads all of `length` bytes before `deadline_ns` (0: no deadline). 0; 1 at end of file;
 * 2 when the deadline passed; -1 with errno set. */
static int
cvideo_read_all(int socket, void *bytes, size_t length, int64_t deadline_ns)
{
    char *p = bytes;

    while (length > 0) {
        ssize_t n;

        if (deadline_ns) {
            struct pollfd ready = { .fd = socket, .events = POLLIN };
            int64_t left = (deadline_ns - cvideo_now_ns()) / 1000000;
            int polled;

            if (left <= 0)
                return 2;
            polled = poll(&ready, 1, (int) (left > 60000 ? 60000 : left));
            if (polled < 0 && errno == EINTR)
                continue;
            if (polled < 0)
                return -1;
            if (polled == 0)
                continue;
        }
        n = recv(socket, p, length, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 1;
        p += n;
        length -= (size_t) n;
    }
    return 0;
}

int
cvideo_helper_serve(int socket)
{
    /* Never left behind: an idle helper exits when the server's end closes (recvmsg gives 0,
     * whether the server closed it or died), and each decode runs under alarm(2), so one that
     * hangs beyond its deadline dies even when no server is left to kill it. (Not
     * PR_SET_PDEATHSIG: it fires when the spawning *thread* exits, which may be any pool thread.) */
    cvideo_quiet();
    for (;;) {
        cvideo_limits limits;
        char control[CMSG_SPACE(sizeof(int))];
        struct iovec vector = { &limits, sizeof limits };
        struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1,
                                  .msg_control = control, .msg_controllen = sizeof control };
        struct cmsghdr *header;
        cvideo_answer answer;
        cvideo_frame frame;
        cvideo_failure failure = { CVIDEO_OK, "" };
        int fd = -1;
        ssize_t n;

        do
            n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_WAITALL);
        while (n < 0 && errno == EINTR);
        if (n <= 0)
            return 0;
        for (header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header))
            if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS)
                memcpy(&fd, CMSG_DATA(header), sizeof fd);
        memset(&answer, 0, sizeof answer);
        if ((size_t) n != sizeof limits || fd < 0) {
            answer.status = CVIDEO_INTERNAL;
            snprintf(answer.message, sizeof answer.message, "the video helper got a malformed request");
        } else if (alarm((unsigned) (limits.timeout_ms / 1000 + 5)), cvideo_poster(fd, &limits, &frame, &failure) == 0) {
            answer.status = CVIDEO_OK;
            answer.width = frame.width;
            answer.height = frame.height;
            answer.rotation = frame.rotation;
            answer.time_ms = frame.time_ms;
            answer.length = frame.length;
        } else {
            answer.status = failure.status;
            memcpy(answer.message, failure.message, sizeof answer.message);
        }
        alarm(0);
        if (fd >= 0)
            close(fd);
        if (cvideo_write_all(socket, &answer, sizeof answer) ||
            (answer.status == CVIDEO_OK && cvideo_write_all(socket, frame.pixels, frame.length))) {
            if (answer.status == CVIDEO_OK)
                cvideo_frame_free(&frame);
            return 0;
        }
        if (answer.status == CVIDEO_OK)
            cvideo_frame_free(&frame);
        /* Give the decode's heap back between requests: a 4K HDR poster peaks at about
         * 670 MB, which an idle helper would otherwise keep resident. */
        malloc_trim(0);
    }
}

int
cvideo_helper_request(int socket, int fd, const cvideo_limits *limits, int wait_ms,
                      cvideo_frame *frame, cvideo_failure *failure)
{
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec vector = { (void *) limits, sizeof *limits };
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1,
                              .msg_control = control, .msg_controllen = sizeof control };
    struct cmsghdr *header;
    cvideo_answer answer;
    int64_t deadline = cvideo_now_ns() + (int64_t) wait_ms * 1000000;
    int read;
    ssize_t n;

    memset(frame, 0, sizeof(*frame));
    memset(control, 0, sizeof control);
    header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof fd);
    do
        n = sendmsg(socket, &message, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t) sizeof *limits) {
        failure->status = CVIDEO_HELPER_LOST;
        snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "the video helper is gone (it took no request)");
        return -2;
    }

    read = cvideo_read_all(socket, &answer, sizeof answer, deadline);
    if (read == 0 && answer.status == CVIDEO_OK) {
        /* The helper's sizes are checked, not trusted: its process may be compromised. */
        if (answer.width <= 0 || answer.height <= 0 ||
            answer.length != (uint64_t) answer.width * (uint64_t) answer.height * 3 ||
            (limits->max_pixels > 0 && (int64_t) answer.width * answer.height > limits->max_pixels)) {
            failure->status = CVIDEO_HELPER_LOST;
            snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "the video helper answered with an inconsistent frame");
            return -2;
        }
        if (!(frame->pixels = malloc(answer.length))) {
            /* The pixels stay unread in the socket: the helper must be replaced. */
            failure->status = CVIDEO_INTERNAL;
            snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "out of memory for the poster frame");
            return -2;
        }
        read = cvideo_read_all(socket, frame->pixels, answer.length, deadline);
        if (read != 0)
            cvideo_frame_free(frame);
    }
    if (read == 2) {
        failure->status = CVIDEO_HELPER_HUNG;
        snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "the video helper gave no answer within %d ms", wait_ms);
        return -2;
    }
    if (read != 0) {
        failure->status = CVIDEO_HELPER_LOST;
        snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "the video helper died during the decode");
        return -2;
    }
    if (answer.status != CVIDEO_OK) {
        failure->status = answer.status >= CVIDEO_UNSUPPORTED && answer.status <= CVIDEO_INTERNAL
            ? (cvideo_status) answer.status : CVIDEO_INTERNAL;
        memcpy(failure->message, answer.message, CVIDEO_MESSAGE_SIZE);
        failure->message[CVIDEO_MESSAGE_SIZE - 1] = '\0';
        return -1;
    }
    frame->length = answer.length;
    frame->width = answer.width;
    frame->height = answer.height;
    frame->rotation = answer.rotation == 90 || answer.rotation == 180 || answer.rotation == 270 ? answer.rotation : 0;
    frame->time_ms = answer.time_ms;
    return 0;
}
