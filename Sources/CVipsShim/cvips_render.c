/*
 * The render job: descriptor in, encoded thumbnail out.
 *
 * Why this exists: it is one multi-step libvips pipeline (thumbnail → decode → exact size →
 * sRGB 8-bit → flatten → encode) whose intermediate images must never reach Swift, and whose
 * failures must be told apart: a source that will not decode (415) from our own fault (500).
 */
#include <string.h>

#include "cvips_internal.h"

static const char *const cvips_format_names[] = { "JPEG", "PNG", "WebP" };

/* vips_thumbnail_source on `source` into the box `width` x `height` (`crop`: fill it and keep the
 * centre; else fit it) with `options`' other settings at `fail_on`, decoded into memory (the
 * thumbnail's size) so that a decode error shows here, not in a later step. The images hang off
 * `context`. 0 with `*out` set, or -1 with the libvips error pending. */
static int
cvips_thumbnail_decoded(VipsObject *context, VipsSource *source, const cvips_render_options *options,
                        int width, int height, int crop, VipsFailOn fail_on, VipsImage **out)
{
    VipsImage **t = (VipsImage **) vips_object_local_array(context, 2);
    /* 8.14's thumbnail_source does not hand its own `fail_on` to the loader (see below). */
    const char *option_string = fail_on == VIPS_FAIL_ON_NONE ? "fail_on=none" : "fail_on=truncated";
    int result;

    if (options->colour_transform)
        result = vips_thumbnail_source(source, &t[0], width,
            "height", height,
            "size", options->crop ? VIPS_SIZE_DOWN : VIPS_SIZE_FORCE,
            "crop", crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE,
            "export_profile", "srgb",
            "intent", VIPS_INTENT_PERCEPTUAL,
            "fail_on", fail_on,
            "option_string", option_string,
            NULL);
    else
        result = vips_thumbnail_source(source, &t[0], width,
            "height", height,
            "size", options->crop ? VIPS_SIZE_DOWN : VIPS_SIZE_FORCE,
            "crop", crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE,
            "fail_on", fail_on,
            "option_string", option_string,
            NULL);
    if (result || !(t[1] = vips_image_copy_memory(t[0])))
        return -1;
    *out = t[1];
    return 0;
}

/* Whether a render of `options` decodes the covering image uncropped, and if so the box that
 * gives it in `*width` x `*height`: a square `cover` render from a source whose shown size is
 * known, that also makes the placeholder, which is then of the whole picture at no second
 * decode (cvips_deliver_cover crops the centre as vips_thumbnail would have).
 *
 * vips_thumbnail (8.14, resample/thumbnail.c) shrinks by source / box on each axis: in crop mode
 * the smaller factor, in fit mode the larger, with the same clamps after. A box as long as
 * libvips allows on the other axis makes fit mode take the same axis, so the same factor to the
 * bit, the same shrink-on-load and the same resize: the same pixels before the crop. libvips
 * decides the axis again on the image shrunk on load, whose sides are rounded each alone; in a
 * square box the longer side stays the longer (or ties, where both factors are equal), so the
 * axis does not change; in another box it could, and those keep libvips' own crop.
 * RenderingTests' CoverPlaceholderTests compares the bytes of both ways over the corpus. */
static int
cvips_covering_box(const cvips_render_options *options, int *width, int *height)
{
    *width = options->width;
    *height = options->height;
    if (!options->crop || options->placeholder_side <= 0 || options->width != options->height ||
        options->source_width < 1 || options->source_height < 1)
        return 0;
    if ((double) options->source_width / options->width < (double) options->source_height / options->height)
        *height = VIPS_MAX_COORD;   /* the width decides, as in crop mode */
    else
        *width = VIPS_MAX_COORD;
    return 1;
}

/* The placeholder of `covering` (the whole picture, in memory, the thumbnail's size or more on
 * one axis), then its centre at the render's size, delivered (cvips_deliver, which unrefs
 * `context`). 0, or -1 with `failure` filled. */
static int
cvips_deliver_cover(VipsObject *context, VipsImage *covering, const cvips_render_options *options,
                    cvips_thumbnail *thumbnail, cvips_failure *failure)
{
    VipsImage **t = (VipsImage **) vips_object_local_array(context, 1);
    cvips_render_options rest = *options;
    gint64 started = g_get_monotonic_time();
    VipsImage *srgb;

    if (cvips_to_srgb8(context, covering, &srgb))
        vips_error_clear();   /* best effort: the thumbnail is what was asked for */
    else {
        cvips_placeholder(context, srgb, options->placeholder_side, thumbnail);
        if (thumbnail->placeholder)
            thumbnail->placeholder_microseconds = g_get_monotonic_time() - started;
    }
    /* vips_thumbnail's own crop: vips_smartcrop CENTRE to the box, no more than the image. */
    if (vips_smartcrop(covering, &t[0], VIPS_MIN(options->width, covering->Xsize),
            VIPS_MIN(options->height, covering->Ysize), "interesting", VIPS_INTERESTING_CENTRE, NULL)) {
        cvips_thumbnail_free(thumbnail);
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_INTERNAL, "cannot crop the thumbnail");
    }
    rest.placeholder_side = 0;   /* made of the whole picture, or not at all: never of the square */
    return cvips_deliver(context, t[0], &rest, thumbnail, failure);
}

/* Whether libvips' JPEG loader claims `source` (rewound by the sniff). */
static int
cvips_is_jpeg(VipsSource *source)
{
    const char *loader = vips_foreign_find_load_source(source);

    return loader && strcmp(loader, "VipsForeignLoadJpegSource") == 0;
}

int
cvips_render(int fd, const cvips_render_options *options, cvips_thumbnail *thumbnail,
             cvips_failure *failure)
{
    VipsObject *context;
    VipsImage **t;
    VipsImage *decoded = NULL;
    VipsSource *source;
    const char *coder;
    int result, uncropped, width, height;

    memset(thumbnail, 0, sizeof(*thumbnail));
    if (options->width < 1 || options->height < 1) {
        failure->status = CVIPS_INTERNAL;
        g_strlcpy(failure->message, "the thumbnail size must be at least 1x1 px",
            CVIPS_MESSAGE_SIZE);
        return -1;
    }

    if (!(source = cvips_source_at_start(fd, failure)))
        return -1;
    /* The same decision as the header read's (cvips_formats.c): what is listed renders. */
    if (cvips_source_format(source, fd, &coder, failure)) {
        g_object_unref(source);
        return -1;
    }

    /* Every intermediate image hangs off `context` and goes with it. */
    context = VIPS_OBJECT(vips_image_new());
    t = (VipsImage **) vips_object_local_array(context, 3);

    /* Shrink-on-load from the file's bytes; orientation applied (no_rotate FALSE). `contain`
     * asks for the exact target size with FORCE: the caller's size keeps the aspect ratio to
     * the pixel, so the two shrinks differ by under a pixel and the result is exact.
     * `cover` fills the box (never enlarging) and crops the centre (here, or after the
     * placeholder is made of the uncropped image: cvips_covering_box). export_profile + perceptual
     * intent turns ICC-tagged, CMYK and XYB sources into sRGB; plain sRGB and grey sources
     * without a profile skip it (`colour_transform` 0), as it would change nothing. fail_on=truncated refuses
     * truncated and corrupt data that libvips would otherwise pad with grey; 8.14's
     * thumbnail_source does not hand its own `fail_on` to the loader, so it also travels in
     * `option_string` (checked on broken/truncated-10000-bytes.jpg). */
    if (coder) {
        /* ImageMagick has no shrink-on-load: the whole image, then the same thumbnail options. */
        g_object_unref(source);
        source = NULL;
        if (cvips_magick_load(fd, coder, &t[2], failure)) {
            g_object_unref(context);
            return -1;
        }
        if (options->crop && options->placeholder_side > 0)
            cvips_placeholder_of_whole(context, t[2], options, thumbnail);
        if (options->colour_transform)
            result = vips_thumbnail_image(t[2], &t[0], options->width,
                "height", options->height,
                "size", options->crop ? VIPS_SIZE_DOWN : VIPS_SIZE_FORCE,
                "crop", options->crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE,
                "export_profile", "srgb",
                "intent", VIPS_INTENT_PERCEPTUAL,
                NULL);
        else
            result = vips_thumbnail_image(t[2], &t[0], options->width,
                "height", options->height,
                "size", options->crop ? VIPS_SIZE_DOWN : VIPS_SIZE_FORCE,
                "crop", options->crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE,
                NULL);
        if (result) {
            g_object_unref(context);
            return cvips_fail(failure, CVIPS_UNSUPPORTED, "cannot decode the source");
        }
        return cvips_render_finish(context, t[0], options, thumbnail, failure);
    }

    uncropped = cvips_covering_box(options, &width, &height);
    result = cvips_thumbnail_decoded(context, source, options, width, height, options->crop && !uncropped,
        VIPS_FAIL_ON_TRUNCATED, &decoded);
    /* A JPEG cut short (a camera card pulled, a copy still under way) or whose scan stops part
     * way: browsers show what decodes, and so does thumbd (issue 31, item 8), from a second
     * decode at fail_on=none, where libjpeg fills the rest with grey. Only JPEG: the other
     * formats' damage stays 415. The first decode costs a truncated file's render twice, once. */
    if (result) {
        g_object_unref(source);
        if (!(source = cvips_source_at_start(fd, failure))) {
            g_object_unref(context);
            return -1;
        }
        if (cvips_is_jpeg(source)) {
            vips_error_clear();   /* the refusal at fail_on=truncated: the retry's own error, if any, is the one told */
            result = cvips_thumbnail_decoded(context, source, options, width, height,
                options->crop && !uncropped, VIPS_FAIL_ON_NONE, &decoded);
            thumbnail->degraded = result == 0;
        }
    }
    g_object_unref(source);
    if (result) {
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_UNSUPPORTED, "cannot decode the source");
    }
    if (uncropped)
        return cvips_deliver_cover(context, decoded, options, thumbnail, failure);
    return cvips_deliver(context, decoded, options, thumbnail, failure);
}

int
cvips_render_finish(VipsObject *context, VipsImage *thumbnailed, const cvips_render_options *options,
                    cvips_thumbnail *thumbnail, cvips_failure *failure)
{
    VipsImage **t = (VipsImage **) vips_object_local_array(context, 1);

    /* Decode now, into a thumbnail-sized buffer, so a decode error is reported as the
     * source's and a later error can only be ours. */
    if (!(t[0] = vips_image_copy_memory(thumbnailed))) {
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_UNSUPPORTED, "cannot decode the source");
    }
    return cvips_deliver(context, t[0], options, thumbnail, failure);
}

int
cvips_deliver(VipsObject *context, VipsImage *in, const cvips_render_options *options,
              cvips_thumbnail *thumbnail, cvips_failure *failure)
{
    void *bytes = NULL;
    size_t length = 0;

    if (cvips_exact_size(context, in, &in, options->width, options->height) ||
        cvips_to_srgb8(context, in, &in)) {
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_UNSUPPORTED, "cannot convert the source to sRGB");
    }
    /* The placeholder and the encoder both read the sRGB pixels: made once, in memory (the
     * thumbnail's size, 8 MB at most at grid 1), rather than computed again for each. Not when
     * it was made already of the whole picture (cvips_placeholder_of_whole, cvips_deliver_cover). */
    if (options->placeholder_side > 0 && !thumbnail->placeholder) {
        VipsImage **pixels = (VipsImage **) vips_object_local_array(context, 1);

        if (!(*pixels = vips_image_copy_memory(in))) {
            g_object_unref(context);
            return cvips_fail(failure, CVIPS_UNSUPPORTED, "cannot convert the source to sRGB");
        }
        in = *pixels;
        cvips_placeholder(context, in, options->placeholder_side, thumbnail);
    }
    if (options->format == CVIPS_FORMAT_JPEG &&
        cvips_flatten_white(context, in, &in)) {
        cvips_thumbnail_free(thumbnail);   /* the placeholder, if made */
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_INTERNAL, "cannot flatten alpha for JPEG");
    }

    if (cvips_encode(in, options, &bytes, &length)) {
        char what[64];

        g_snprintf(what, sizeof(what), "cannot encode the thumbnail as %s",
            cvips_format_names[options->format <= CVIPS_FORMAT_WEBP ? options->format : 0]);
        cvips_thumbnail_free(thumbnail);
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_INTERNAL, what);
    }

    thumbnail->bytes = bytes;
    thumbnail->length = length;
    thumbnail->width = in->Xsize;
    thumbnail->height = in->Ysize;
    g_object_unref(context);

    return 0;
}

void
cvips_thumbnail_free(cvips_thumbnail *thumbnail)
{
    g_free(thumbnail->bytes);
    g_free(thumbnail->placeholder);
    thumbnail->bytes = NULL;
    thumbnail->length = 0;
    thumbnail->placeholder = NULL;
    thumbnail->placeholder_length = 0;
}
