/*
 * cvideo_shim: what the Swift `Rendering` module needs of FFmpeg 5.1 (libavformat, libavcodec,
 * libswscale), as a few fixed-argument C functions.
 *
 * Why this exists: libav's structs (AVFormatContext, AVCodecContext, AVFrame...) change layout
 * between releases and need careful freeing; the multi-step jobs (open a container on a
 * descriptor, read its header, seek, decode one poster frame, convert it to RGB) run here in C,
 * so no libav type crosses into Swift. It also holds the video helper process' transport: the
 * decoder runs in a child process (cvideo_helper_*), so that a crash or hang in a codec costs
 * one render, never the server.
 */
#ifndef CVIDEO_SHIM_H
#define CVIDEO_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a call ended. Swift maps these onto `RenderError.Kind`. */
typedef enum {
    CVIDEO_OK = 0,
    CVIDEO_UNSUPPORTED = 1,  /* not a video FFmpeg reads here: no container, no video stream,
                                no frame decodes, a container or codec not on the lists */
    CVIDEO_TOO_LARGE = 2,    /* the stream header says more pixels than the limit */
    CVIDEO_TIMEOUT = 3,      /* the deadline passed (libav's interrupt callback) */
    CVIDEO_INTERNAL = 4,     /* a fault on our side: out of memory, a failed system call */
    CVIDEO_HELPER_LOST = 5,  /* the helper process died (crashed, killed) during the request */
    CVIDEO_HELPER_HUNG = 6,  /* the helper gave no answer within the wait: it was killed */
} cvideo_status;

/* Bytes kept of a failure's sentence, including the NUL. */
#define CVIDEO_MESSAGE_SIZE 512

/* Why a call failed: a status and one human sentence (libav's error text where there is one). */
typedef struct {
    cvideo_status status;
    char message[CVIDEO_MESSAGE_SIZE];
} cvideo_failure;

/* Limits of one job. */
typedef struct {
    int64_t max_pixels;    /* width x height of the stream header, px, the stored size's and the
                              displayed one's (display_width x height) alike; 0: no limit */
    int timeout_ms;        /* the whole job's deadline, ms (libav's interrupt callback) */
} cvideo_limits;

/* Container header facts, read without decoding (the demuxer's header only). */
typedef struct {
    int width;             /* coded size of the video stream as stored, px */
    int height;
    int display_width;     /* width as players show it, px: width x the sample aspect ratio
                              (the container's, else the bitstream's: av_guess_sample_aspect_ratio),
                              rounded, as ffprobe's display_aspect_ratio implies; the height is
                              kept. `width` when the ratio is unset, 1:1, or outside 1:8...8:1 (taken
                              for corrupt). Before rotation, as width and height */
    int rotation;          /* clockwise degrees to display it: 0, 90, 180 or 270 (from the
                              display matrix, whose av_display_rotation_get angle is
                              counter-clockwise) */
    int64_t duration_ms;   /* container duration, ms; -1 when unknown */
    char container[32];    /* demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" cut to fit */
    char codec[32];        /* codec name, e.g. "h264", "hevc" */
    char quicktime_creation[48]; /* com.apple.quicktime.creationdate, e.g.
                                    "2024-05-01T12:30:00+0900"; "" when absent */
    char creation_time[48];      /* creation_time (UTC), e.g. "2024-05-01T03:30:00.000000Z" */
} cvideo_header;

/* A decoded poster frame: packed RGB, 3 bytes a px, rows of exactly width * 3 bytes
 * (alignment 1), scaled to the display width (cvideo_header.display_width: the sample aspect
 * ratio applied) but not rotated. `pixels` is malloc'ed: cvideo_frame_free. */
typedef struct {
    unsigned char *pixels;
    size_t length;         /* bytes: width * height * 3 */
    int width;
    int height;
    int rotation;          /* clockwise degrees to display it, as cvideo_header.rotation */
    int64_t time_ms;       /* presentation time of the frame chosen, ms from the stream start */
} cvideo_frame;

/* Reads the container header of the file open on `fd` (read with pread: the descriptor's
 * offset is not used) without opening a decoder. Refuses a container not on the list (MP4,
 * QuickTime, Matroska/WebM, AVI) or without a video stream (CVIDEO_UNSUPPORTED).
 * Returns 0, or -1 with `failure` filled. */
int cvideo_probe(int fd, const cvideo_limits *limits, cvideo_header *header, cvideo_failure *failure);

/* Decodes the poster frame of the file open on `fd` (the frame rule is in cvideo_poster.c and
 * README "Videos"), checking the pixel limit from the stream header before a decoder opens.
 * Returns 0 with `frame` filled, or -1 with `failure` filled. */
int cvideo_poster(int fd, const cvideo_limits *limits, cvideo_frame *frame, cvideo_failure *failure);

/* Frees a frame's pixels. */
void cvideo_frame_free(cvideo_frame *frame);

/* The FFmpeg release of the libavutil loaded at run time ("5.1.6-0+deb12u1"): av_version_info().
 * A static string. */
const char *cvideo_ffmpeg_version(void);

/* The libavformat loaded at run time as major.minor.micro ("59.27.100"), from avformat_version(),
 * written into `buffer` of `size` bytes (16 is enough). */
void cvideo_avformat_version(char *buffer, size_t size);

/* Starts the helper process: `executable` run with the one argument `argument` and a
 * socket (AF_UNIX, SOCK_STREAM, close-on-exec in the parent) on its descriptor 3. Returns the
 * parent's end and sets `*pid`, or -1 with `failure` filled. */
int cvideo_helper_spawn(const char *executable, const char *argument, pid_t *pid, cvideo_failure *failure);

/* The helper's loop, on descriptor `socket`: each request (limits, and a descriptor passed with
 * SCM_RIGHTS) is answered with cvideo_poster's outcome, until the parent closes its end.
 * Returns 0 then. */
int cvideo_helper_serve(int socket);

/* One poster through the helper on `socket`: sends `fd` and `limits`, and waits at most
 * `wait_ms` for the whole answer. CVIDEO_HELPER_LOST when the helper's end closes (it died),
 * CVIDEO_HELPER_HUNG when the wait passes. Returns 0 with `frame` filled; -1 with `failure`
 * filled (the helper answered and can take the next request); -2 with `failure` filled when
 * the helper must be killed and replaced (lost, hung, or its answer not read to the end). */
int cvideo_helper_request(int socket, int fd, const cvideo_limits *limits, int wait_ms,
                          cvideo_frame *frame, cvideo_failure *failure);

#ifdef __cplusplus
}
#endif

#endif /* CVIDEO_SHIM_H */
