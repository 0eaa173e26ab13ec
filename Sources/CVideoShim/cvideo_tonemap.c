/*
 * HDR to SDR: a poster of an HLG or PQ video (an iPhone's 10-bit HEVC) tone-mapped to 8-bit
 * BT.709/sRGB, so it is not washed out.
 *
 * Why this exists: swscale converts the matrix and the bit depth but not the transfer function
 * or the gamut. FFmpeg's own recipe does: zscale to linear light (nominal peak 100 cd/m²),
 * BT.2020 to BT.709 primaries in float, the `tonemap` filter (Hable, no desaturation), then
 * back to the BT.709 transfer, full-range RGB. One filter graph per poster, on one thread.
 */
#include <stdio.h>

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>

#include "cvideo_internal.h"

static const char *const cvideo_tonemap_chain =
    "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,"
    "zscale=t=bt709:m=bt709:r=pc,format=rgb24";

int
cvideo_is_hdr(const AVFrame *frame)
{
    return frame->color_trc == AVCOL_TRC_ARIB_STD_B67 || frame->color_trc == AVCOL_TRC_SMPTE2084;
}

int
cvideo_tonemap(const AVFrame *in, AVFrame *out, cvideo_failure *failure)
{
    AVFilterGraph *graph = avfilter_graph_alloc();
    AVFilterContext *source = NULL, *sink = NULL;
    AVFilterInOut *inputs = NULL, *outputs = NULL;
    AVFrame *copy = NULL;
    char arguments[160];
    int error;

    if (!graph || !(inputs = avfilter_inout_alloc()) || !(outputs = avfilter_inout_alloc()) ||
        !(copy = av_frame_clone(in))) {
        error = AVERROR(ENOMEM);
        goto done;
    }
    graph->nb_threads = 1;
    snprintf(arguments, sizeof arguments, "video_size=%dx%d:pix_fmt=%d:time_base=1/1:pixel_aspect=1/1",
             in->width, in->height, in->format);
    if ((error = avfilter_graph_create_filter(&source, avfilter_get_by_name("buffer"), "in", arguments, NULL, graph)) < 0 ||
        (error = avfilter_graph_create_filter(&sink, avfilter_get_by_name("buffersink"), "out", NULL, NULL, graph)) < 0)
        goto done;
    outputs->name = av_strdup("in");
    outputs->filter_ctx = source;
    inputs->name = av_strdup("out");
    inputs->filter_ctx = sink;
    if ((error = avfilter_graph_parse_ptr(graph, cvideo_tonemap_chain, &inputs, &outputs, NULL)) < 0 ||
        (error = avfilter_graph_config(graph, NULL)) < 0)
        goto done;
    if ((error = av_buffersrc_add_frame(source, copy)) < 0 ||
        (error = av_buffersrc_add_frame(source, NULL)) < 0)
        goto done;
    error = av_buffersink_get_frame(sink, out);

done:
    av_frame_free(&copy);
    avfilter_inout_free(&inputs);
    avfilter_inout_free(&outputs);
    avfilter_graph_free(&graph);
    if (error < 0)
        return cvideo_fail(failure, CVIDEO_UNSUPPORTED, "the HDR poster frame could not be tone-mapped", error);
    return 0;
}
