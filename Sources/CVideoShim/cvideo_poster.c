/*
 * The poster frame: which frame of a video stands for it, decoded once, as packed RGB.
 *
 * Why this exists: a decode is a multi-step libav job (decoder from the stream header, seek,
 * packets, frames, colour conversion) whose structs must never reach Swift.
 *
 * The frame rule (README "Videos"):
 *   - a clip of 2 s or less, or of unknown duration: its first keyframe;
 *   - otherwise the first keyframe at or after min(10% of the duration, 10 s) (the last one
 *     before it when there is none after);
 *   - a frame that is near-black (mean luma under CVIDEO_DARK) or flat (luma standard
 *     deviation under CVIDEO_FLAT: a fade, a title card of one colour) gives way to the next
 *     keyframe, at most CVIDEO_CANDIDATES keyframes in all; when every one is dark or flat,
 *     the first is kept.
 * Only keyframes are decoded (each decodes alone), so the decoder never works through a GOP.
 * The frame is stretched to its display width (the sample aspect ratio: cvideo_header's
 * display_width), as players show it; rotation is left to the renderer.
 * An HDR frame (HLG, PQ) is tone-mapped to SDR first (cvideo_tonemap.c).
 */
#include <stdlib.h>
#include <string.h>

#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>

#include "cvideo_internal.h"

/* Keyframes decoded at most in the search for one that is neither dark nor flat. */
#define CVIDEO_CANDIDATES 6
/* Keyframes that fail to decode before the file is refused as undecodable. */
#define CVIDEO_DECODE_FAILURES 4
/* Packets read at most (of any stream) before giving up: bounds an endless or keyframe-less
 * stream even inside the deadline. */
#define CVIDEO_PACKETS 20000
/* Mean luma (0...255) under which a frame counts as near-black. */
#define CVIDEO_DARK 24
/* Luma standard deviation (0...255) under which a frame counts as flat. */
#define CVIDEO_FLAT 6

/* The colour matrix swscale should read `frame`'s YUV with: its own tag, else BT.709 for HD
 * sizes and BT.601 for SD (what players assume for untagged video). */
static const int *
cvideo_coefficients(const AVFrame *frame)
{
    int space = frame->colorspace;

    if (space == AVCOL_SPC_UNSPECIFIED || space == AVCOL_SPC_RESERVED || space == AVCOL_SPC_RGB)
        space = frame->height >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
    if (space == AVCOL_SPC_BT2020_CL)
        space = AVCOL_SPC_BT2020_NCL;
    return sws_getCoefficients(space);
}

/* The width `frame` is shown at: the header's sample aspect ratio (display_width / width)
 * applied to the frame's own width (the bitstream's size may differ from the container's),
 * rounded to the nearest px, at least 1. */
static int
cvideo_shown_width(const AVFrame *frame, const cvideo_header *header)
{
    int64_t shown;

    if (header->display_width == header->width || header->width <= 0)
        return frame->width;
    shown = ((int64_t) frame->width * header->display_width * 2 + header->width) / ((int64_t) header->width * 2);
    return shown < 1 ? 1 : shown > 65535 ? frame->width : (int) shown;
}

/* `frame` as packed RGB `width` px wide (its own width, or the display width: swscale
 * stretches it), rows of exactly width * 3 bytes. 0, or -1 with `failure` filled. */
static int
cvideo_to_rgb(const AVFrame *frame, int width, cvideo_frame *out, cvideo_failure *failure)
{
    struct SwsContext *scale;
    int stride = FFALIGN(width * 3, 64);
    size_t packed = (size_t) width * 3;
    unsigned char *pixels;
    uint8_t *planes[4] = { NULL };
    int strides[4] = { stride, 0, 0, 0 };
    int full_range = frame->color_range == AVCOL_RANGE_JPEG;

    /* swscale writes rows padded to its alignment; the padding is squeezed out after. */
    if (!(pixels = malloc((size_t) stride * (size_t) frame->height + 64)))
        return cvideo_fail(failure, CVIDEO_INTERNAL, "out of memory for the poster frame", 0);
    scale = sws_getContext(frame->width, frame->height, frame->format, width, frame->height,
                           AV_PIX_FMT_RGB24, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
    if (!scale) {
        free(pixels);
        return cvideo_fail(failure, CVIDEO_UNSUPPORTED, "the video's pixel format cannot be converted to RGB", 0);
    }
    sws_setColorspaceDetails(scale, cvideo_coefficients(frame), full_range,
                             sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
    planes[0] = pixels;
    if (sws_scale(scale, (const uint8_t *const *) frame->data, frame->linesize, 0, frame->height,
                  planes, strides) != frame->height) {
        sws_freeContext(scale);
        free(pixels);
        return cvideo_fail(failure, CVIDEO_UNSUPPORTED, "the poster frame could not be converted to RGB", 0);
    }
    sws_freeContext(scale);
    for (int y = 1; y < frame->height; y++)
        memmove(pixels + (size_t) y * packed, pixels + (size_t) y * (size_t) stride, packed);

    out->pixels = pixels;
    out->length = packed * (size_t) frame->height;
    out->width = width;
    out->height = frame->height;
    return 0;
}

/* Whether packed RGB `frame` is near-black or flat, from a grid of about 4096 samples. */
static int
cvideo_dark_or_flat(const cvideo_frame *frame)
{
    int step_x = frame->width / 64 > 0 ? frame->width / 64 : 1;
    int step_y = frame->height / 64 > 0 ? frame->height / 64 : 1;
    double sum = 0, squares = 0, n = 0, mean, variance;

    for (int y = step_y / 2; y < frame->height; y += step_y)
        for (int x = step_x / 2; x < frame->width; x += step_x) {
            const unsigned char *p = frame->pixels + ((size_t) y * (size_t) frame->width + (size_t) x) * 3;
            double luma = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];

            sum += luma;
            squares += luma * luma;
            n++;
        }
    mean = sum / n;
    variance = squares / n - mean * mean;
    return mean < CVIDEO_DARK || variance < CVIDEO_FLAT * CVIDEO_FLAT;
}

/* Decodes the one keyframe `packet` into `*frame` (the decoder drained and reset after). 0 when
 * a clean frame came out, a libav error otherwise. */
static int
cvideo_decode_key(AVCodecContext *decoder, const AVPacket *packet, AVFrame *frame)
{
    int error = avcodec_send_packet(decoder, packet);

    if (error >= 0)
        error = avcodec_send_packet(decoder, NULL);
    if (error >= 0 || error == AVERROR_EOF)
        error = avcodec_receive_frame(decoder, frame);
    avcodec_flush_buffers(decoder);
    if (error >= 0 && (frame->decode_error_flags || (frame->flags & AV_FRAME_FLAG_CORRUPT))) {
        av_frame_unref(frame);
        error = AVERROR_INVALIDDATA;
    }
    return error;
}

/* Seeks to the first keyframe at or after the rule's time (the last before it when there is
 * none after); a container that cannot seek is read from its start. */
static void
cvideo_seek_to_rule(cvideo_input *input, const cvideo_header *header)
{
    AVStream *stream = input->format->streams[input->stream];
    int64_t target_ms, target;

    if (header->duration_ms <= 2000)
        return;
    target_ms = header->duration_ms / 10 < 10000 ? header->duration_ms / 10 : 10000;
    target = av_rescale_q(target_ms, (AVRational) { 1, 1000 }, stream->time_base);
    if (stream->start_time != AV_NOPTS_VALUE)
        target += stream->start_time;
    if (av_seek_frame(input->format, input->stream, target, 0) >= 0)
        return;
    if (av_seek_frame(input->format, input->stream, target, AVSEEK_FLAG_BACKWARD) >= 0)
        return;
    av_seek_frame(input->format, input->stream, stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0,
                  AVSEEK_FLAG_BACKWARD);
}

int
cvideo_poster(int fd, const cvideo_limits *limits, cvideo_frame *out, cvideo_failure *failure)
{
    cvideo_input input;
    cvideo_header header;
    const AVCodec *codec;
    AVCodecContext *decoder = NULL;
    AVDictionary *options = NULL;
    AVPacket *packet = NULL;
    AVFrame *frame = NULL;
    AVStream *stream;
    cvideo_frame fallback = { 0 };
    int candidates = 0, failures = 0, packets = 0, error = 0, result = -1;

    memset(out, 0, sizeof(*out));
    if (cvideo_input_open(&input, fd, limits, &header, failure))
        return -1;
    stream = input.format->streams[input.stream];

    if (!(codec = avcodec_find_decoder(stream->codecpar->codec_id))) {
        cvideo_fail(failure, CVIDEO_UNSUPPORTED, "no decoder for the video's codec", 0);
        goto done;
    }
    if (!(decoder = avcodec_alloc_context3(codec)) || !(packet = av_packet_alloc()) || !(frame = av_frame_alloc())) {
        cvideo_fail(failure, CVIDEO_INTERNAL, "out of memory", 0);
        goto done;
    }
    if ((error = avcodec_parameters_to_context(decoder, stream->codecpar)) < 0) {
        cvideo_fail(failure, CVIDEO_UNSUPPORTED, "the video's codec parameters are invalid", error);
        goto done;
    }
    /* One thread: parallelism comes from concurrent renders; one keyframe gains little. */
    decoder->thread_count = 1;
    /* libavcodec's own check of the sizes the bitstream gives (the container's may lie). */
    if (limits->max_pixels > 0)
        decoder->max_pixels = limits->max_pixels;
    decoder->pkt_timebase = stream->time_base;
    av_dict_set(&options, "codec_whitelist", cvideo_codec_list, 0);
    error = avcodec_open2(decoder, codec, &options);
    av_dict_free(&options);
    if (error < 0) {
        cvideo_fail(failure, CVIDEO_UNSUPPORTED, "the video's decoder would not open", error);
        goto done;
    }

    cvideo_seek_to_rule(&input, &header);
    while (candidates < CVIDEO_CANDIDATES && failures < CVIDEO_DECODE_FAILURES) {
        cvideo_frame candidate = { 0 };

        if (++packets > CVIDEO_PACKETS) {
            error = 0;
            break;
        }
        if ((error = av_read_frame(input.format, packet)) < 0)
            break;
        if (packet->stream_index != input.stream || !(packet->flags & AV_PKT_FLAG_KEY)) {
            av_packet_unref(packet);
            continue;
        }
        error = cvideo_decode_key(decoder, packet, frame);
        if (error >= 0 && limits->max_pixels > 0 &&
            (int64_t) FFMAX(frame->width, cvideo_shown_width(frame, &header)) * frame->height > limits->max_pixels)
            error = AVERROR_INVALIDDATA;
        if (error < 0) {
            av_packet_unref(packet);
            if (error == AVERROR_EXIT || error == AVERROR(ENOMEM))
                break;
            failures++;
            continue;
        }
        candidates++;
        if (cvideo_is_hdr(frame)) {
            AVFrame *mapped = av_frame_alloc();

            if (!mapped || cvideo_tonemap(frame, mapped, failure)) {
                if (!mapped)
                    cvideo_fail(failure, CVIDEO_INTERNAL, "out of memory", 0);
                av_frame_free(&mapped);
                av_packet_unref(packet);
                av_frame_unref(frame);
                goto done;
            }
            av_frame_unref(frame);
            av_frame_move_ref(frame, mapped);
            av_frame_free(&mapped);
        }
        if (cvideo_to_rgb(frame, cvideo_shown_width(frame, &header), &candidate, failure)) {
            av_packet_unref(packet);
            av_frame_unref(frame);
            goto done;
        }
        candidate.rotation = header.rotation;
        candidate.time_ms = frame->best_effort_timestamp == AV_NOPTS_VALUE ? 0
            : av_rescale_q(frame->best_effort_timestamp - (stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0),
                           stream->time_base, (AVRational) { 1, 1000 });
        av_packet_unref(packet);
        av_frame_unref(frame);
        if (!cvideo_dark_or_flat(&candidate)) {
            cvideo_frame_free(&fallback);
            *out = candidate;
            result = 0;
            goto done;
        }
        if (fallback.pixels)
            cvideo_frame_free(&candidate);
        else
            fallback = candidate;
    }
    if (fallback.pixels) {
        *out = fallback;
        fallback.pixels = NULL;
        result = 0;
    } else if (error == AVERROR_EXIT || error == AVERROR(ENOMEM))
        cvideo_fail(failure, CVIDEO_UNSUPPORTED, "the poster frame could not be decoded", error);
    else
        cvideo_fail(failure, CVIDEO_UNSUPPORTED,
                    failures ? "no keyframe of the video decodes" : "the video holds no keyframe", 0);

done:
    cvideo_frame_free(&fallback);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&decoder);
    cvideo_input_close(&input);
    return result;
}

void
cvideo_frame_free(cvideo_frame *frame)
{
    free(frame->pixels);
    frame->pixels = NULL;
    frame->length = 0;
}
