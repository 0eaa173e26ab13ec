/*
 * Helpers shared by the shim's .c files; not part of the public header.
 */
#ifndef CVIDEO_INTERNAL_H
#define CVIDEO_INTERNAL_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>

#include "cvideo_shim.h"

/* A container opened on a descriptor, with its deadline and its chosen video stream. */
typedef struct {
    AVFormatContext *format;
    AVIOContext *io;
    int fd;
    int64_t position;      /* bytes: where the next read starts (pread) */
    int64_t deadline_ns;   /* CLOCK_MONOTONIC; the interrupt callback stops libav after it */
    int stream;            /* index of the video stream */
} cvideo_input;

/* Opens the container on `fd` (custom I/O with pread, probe-size and analyse-duration caps,
 * the lists of containers and codecs read, the interrupt callback at `limits->timeout_ms`),
 * picks its video stream (not an attached cover picture) and fills `header`. Checks the pixel
 * limit from the stream header. 0, or -1 with `failure` filled (the input then closed). */
int cvideo_input_open(cvideo_input *input, int fd, const cvideo_limits *limits,
                      cvideo_header *header, cvideo_failure *failure);

/* Closes what cvideo_input_open opened. */
void cvideo_input_close(cvideo_input *input);

/* The codecs decoded (libavcodec decoder names), for AVCodecContext.codec_whitelist. */
extern const char *const cvideo_codec_list;

/* Fills `failure` with `status` and "`what`: <libav's text for `error`>" (no text for error 0);
 * a deadline hit (AVERROR_EXIT) becomes CVIDEO_TIMEOUT, ENOMEM CVIDEO_INTERNAL. Returns -1. */
int cvideo_fail(cvideo_failure *failure, cvideo_status status, const char *what, int error);

/* Whether `frame` is HDR: HLG (ARIB STD-B67) or PQ (SMPTE ST 2084) transfer. */
int cvideo_is_hdr(const AVFrame *frame);

/* Tone-maps HDR `in` to SDR full-range RGB24 (BT.709) into `out` (cvideo_tonemap.c).
 * 0, or -1 with `failure` filled. */
int cvideo_tonemap(const AVFrame *in, AVFrame *out, cvideo_failure *failure);

/* CLOCK_MONOTONIC now, ns. */
int64_t cvideo_now_ns(void);

/* libav's log quiet (its lines would reach the server's stderr for every hostile file). Once. */
void cvideo_quiet(void);

#endif /* CVIDEO_INTERNAL_H */
