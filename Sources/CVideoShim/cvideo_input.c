/*
 * Opening a container on a descriptor, with every cap a hostile file needs.
 *
 * Why this exists: avformat_open_input on a name would open the file itself (a FIFO would
 * block, "name:" is parsed as a protocol). The shim reads the descriptor thumbd opened and
 * checked, with pread, through custom I/O; probing reads at most CVIDEO_PROBE_BYTES; only the
 * containers and codecs of README "Videos" are read; libav's interrupt callback ends any call
 * once the deadline has passed.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libavutil/display.h>

#include "cvideo_internal.h"

/* Bytes the format probe and stream analysis may read (AVFormatContext.probesize): 1 MiB. */
#define CVIDEO_PROBE_BYTES (1 << 20)
/* Stream time stream analysis may read (max_analyze_duration), µs: 1 s. */
#define CVIDEO_ANALYZE_US 1000000
/* The custom I/O buffer, bytes. */
#define CVIDEO_IO_BUFFER 65536

/* libavformat demuxer names: MP4/QuickTime/M4V, Matroska/WebM, AVI. */
static const char *const cvideo_container_list = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi";
const char *const cvideo_codec_list = "h264,hevc,vp8,vp9,av1,libdav1d,mpeg4,mjpeg,prores,mpeg2video,mpeg1video,h263,dvvideo,msmpeg4,msmpeg4v2,msmpeg4v3,wmv1,wmv2";

int64_t
cvideo_now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t) now.tv_sec * 1000000000 + now.tv_nsec;
}

static pthread_once_t cvideo_quiet_once = PTHREAD_ONCE_INIT;

static void
cvideo_quiet_now(void)
{
    av_log_set_level(AV_LOG_QUIET);
}

void
cvideo_quiet(void)
{
    pthread_once(&cvideo_quiet_once, cvideo_quiet_now);
}

int
cvideo_fail(cvideo_failure *failure, cvideo_status status, const char *what, int error)
{
    char text[256] = "";

    if (error == AVERROR_EXIT)
        status = CVIDEO_TIMEOUT;
    else if (error == AVERROR(ENOMEM))
        status = CVIDEO_INTERNAL;
    if (error != 0)
        av_strerror(error, text, sizeof text);
    failure->status = status;
    if (status == CVIDEO_TIMEOUT)
        snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "%s: the video decode deadline passed", what);
    else if (text[0] != '\0')
        snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "%s: %s", what, text);
    else
        snprintf(failure->message, CVIDEO_MESSAGE_SIZE, "%s", what);
    return -1;
}

static int
cvideo_read(void *opaque, uint8_t *buffer, int size)
{
    cvideo_input *input = opaque;
    ssize_t n;

    do
        n = pread(input->fd, buffer, (size_t) size, input->position);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return AVERROR(errno);
    if (n == 0)
        return AVERROR_EOF;
    input->position += n;
    return (int) n;
}

static int64_t
cvideo_seek(void *opaque, int64_t offset, int whence)
{
    cvideo_input *input = opaque;
    struct stat st;

    if (fstat(input->fd, &st) != 0)
        return AVERROR(errno);
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return st.st_size;
    case SEEK_SET: break;
    case SEEK_CUR: offset += input->position; break;
    case SEEK_END: offset += st.st_size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset < 0)
        return AVERROR(EINVAL);
    input->position = offset;
    return offset;
}

static int
cvideo_interrupted(void *opaque)
{
    const cvideo_input *input = opaque;

    return cvideo_now_ns() > input->deadline_ns;
}

/* The display matrix' rotation as clockwise degrees, 0, 90, 180 or 270 (nearest). */
static int
cvideo_rotation(const AVStream *stream)
{
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    double counter_clockwise;
    long quarter;

    if (!matrix)
        return 0;
    counter_clockwise = av_display_rotation_get((const int32_t *) matrix);
    if (isnan(counter_clockwise))
        return 0;
    quarter = lround(-counter_clockwise / 90.0) % 4;
    return (int) ((quarter + 4) % 4) * 90;
}

/* The width `stream` is shown at: its stored width times the sample aspect ratio (the
 * container's, else the bitstream's), rounded to the nearest px, the height kept (as players
 * and ffprobe's display_aspect_ratio have it). A ratio unset, 1:1 or outside 1:8...8:1 (a
 * corrupt or hostile value that would widen the frame beyond reason) leaves the width. */
static int
cvideo_display_width(AVFormatContext *format, AVStream *stream)
{
    AVRational sar = av_guess_sample_aspect_ratio(format, stream, NULL);
    int width = stream->codecpar->width;
    int64_t shown;

    if (sar.num <= 0 || sar.den <= 0 || sar.num == sar.den ||
        (int64_t) sar.num > (int64_t) sar.den * 8 || (int64_t) sar.den > (int64_t) sar.num * 8)
        return width;
    shown = ((int64_t) width * sar.num * 2 + sar.den) / ((int64_t) sar.den * 2);
    return shown > 0 && shown <= 65535 ? (int) shown : width;
}

static void
cvideo_copy_tag(AVDictionary *metadata, const char *key, char *out, size_t size)
{
    const AVDictionaryEntry *entry = av_dict_get(metadata, key, NULL, 0);

    if (entry && entry->value && out[0] == '\0')
        snprintf(out, size, "%s", entry->value);
}

int
cvideo_input_open(cvideo_input *input, int fd, const cvideo_limits *limits,
                  cvideo_header *header, cvideo_failure *failure)
{
    unsigned char *buffer;
    AVStream *stream = NULL;
    int error;

    cvideo_quiet();
    memset(input, 0, sizeof(*input));
    memset(header, 0, sizeof(*header));
    input->fd = fd;
    input->stream = -1;
    input->deadline_ns = cvideo_now_ns() + (int64_t) (limits->timeout_ms > 0 ? limits->timeout_ms : 10000) * 1000000;

    if (!(input->format = avformat_alloc_context()) ||
        !(buffer = av_malloc(CVIDEO_IO_BUFFER)))
        return cvideo_input_close(input), cvideo_fail(failure, CVIDEO_INTERNAL, "out of memory", 0);
    if (!(input->io = avio_alloc_context(buffer, CVIDEO_IO_BUFFER, 0, input, cvideo_read, NULL, cvideo_seek))) {
        av_free(buffer);
        return cvideo_input_close(input), cvideo_fail(failure, CVIDEO_INTERNAL, "out of memory", 0);
    }
    input->format->pb = input->io;
    input->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    input->format->probesize = CVIDEO_PROBE_BYTES;
    input->format->format_probesize = CVIDEO_PROBE_BYTES;
    input->format->max_analyze_duration = CVIDEO_ANALYZE_US;
    input->format->interrupt_callback.callback = cvideo_interrupted;
    input->format->interrupt_callback.opaque = input;
    input->format->format_whitelist = av_strdup(cvideo_container_list);
    input->format->codec_whitelist = av_strdup(cvideo_codec_list);
    input->format->protocol_whitelist = av_strdup("none");

    /* On failure avformat_open_input frees the context (not the custom I/O). */
    if ((error = avformat_open_input(&input->format, NULL, NULL, NULL)) < 0) {
        input->format = NULL;
        cvideo_input_close(input);
        return cvideo_fail(failure, CVIDEO_UNSUPPORTED, "not a video thumbd reads", error);
    }

    for (unsigned i = 0; i < input->format->nb_streams; i++) {
        AVStream *candidate = input->format->streams[i];

        if (candidate->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
            !(candidate->disposition & AV_DISPOSITION_ATTACHED_PIC) &&
            candidate->codecpar->width > 0 && candidate->codecpar->height > 0) {
            stream = candidate;
            input->stream = (int) i;
            break;
        }
    }
    if (!stream) {
        cvideo_input_close(input);
        return cvideo_fail(failure, CVIDEO_UNSUPPORTED, "the file holds no video stream with a size", 0);
    }

    header->width = stream->codecpar->width;
    header->height = stream->codecpar->height;
    header->display_width = cvideo_display_width(input->format, stream);
    header->rotation = cvideo_rotation(stream);
    header->duration_ms = -1;
    if (input->format->duration != AV_NOPTS_VALUE && input->format->duration > 0)
        header->duration_ms = input->format->duration / 1000;
    else if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0)
        header->duration_ms = av_rescale_q(stream->duration, stream->time_base, (AVRational) { 1, 1000 });
    snprintf(header->container, sizeof header->container, "%s", input->format->iformat->name);
    snprintf(header->codec, sizeof header->codec, "%s", avcodec_get_name(stream->codecpar->codec_id));
    cvideo_copy_tag(input->format->metadata, "com.apple.quicktime.creationdate",
                    header->quicktime_creation, sizeof header->quicktime_creation);
    cvideo_copy_tag(input->format->metadata, "creation_time", header->creation_time, sizeof header->creation_time);
    cvideo_copy_tag(stream->metadata, "creation_time", header->creation_time, sizeof header->creation_time);

    /* The poster is made at the display width: its pixels are judged as well as the stored ones. */
    if (limits->max_pixels > 0 &&
        (int64_t) (header->width > header->display_width ? header->width : header->display_width) * header->height
            > limits->max_pixels) {
        char what[200];
        int widest = header->width > header->display_width ? header->width : header->display_width;

        snprintf(what, sizeof what, "the video is %dx%d px (%lld pixels, shown %dx%d), over the limit of %lld pixels",
                 header->width, header->height, (long long) widest * header->height,
                 header->display_width, header->height, (long long) limits->max_pixels);
        cvideo_input_close(input);
        return cvideo_fail(failure, CVIDEO_TOO_LARGE, what, 0);
    }
    return 0;
}

void
cvideo_input_close(cvideo_input *input)
{
    if (input->format)
        avformat_close_input(&input->format);
    if (input->io) {
        av_freep(&input->io->buffer);
        avio_context_free(&input->io);
    }
}

int
cvideo_probe(int fd, const cvideo_limits *limits, cvideo_header *header, cvideo_failure *failure)
{
    cvideo_input input;
    cvideo_limits unlimited = *limits;

    /* The listing lists a video over the pixel limit (its render gives 422), as it does photos. */
    unlimited.max_pixels = 0;
    if (cvideo_input_open(&input, fd, &unlimited, header, failure))
        return -1;
    cvideo_input_close(&input);
    return 0;
}
