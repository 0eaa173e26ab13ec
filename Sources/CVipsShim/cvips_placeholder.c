/*
 * The placeholder image of a render: the thumbnail, already decoded, shrunk to at most N x N px
 * as 8-bit sRGB RGBA, for a ThumbHash (Sources/ThumbHash).
 *
 * Why this exists: the placeholder must cost no second decode of the source, so it is made here
 * from the render's own in-memory image, which never leaves C; and a failure to make it must not
 * fail the render (the thumbnail is what the client asked for).
 */
#include <string.h>

#include "cvips_internal.h"

void
cvips_placeholder(VipsObject *context, VipsImage *in, int side, cvips_thumbnail *thumbnail)
{
    VipsImage **t = (VipsImage **) vips_object_local_array(context, 3);
    VipsImage *out;
    gint64 started = g_get_monotonic_time();
    size_t length;
    void *pixels;

    /* `in` is 8-bit sRGB, 3 bands or 4 (cvips_to_srgb8). vips_thumbnail_image premultiplies
     * alpha while it shrinks, and never enlarges (SIZE_DOWN). No profile is given: the pixels
     * are sRGB already. */
    if (in->Xsize > side || in->Ysize > side) {
        if (vips_thumbnail_image(in, &t[0], side, "height", side, "size", VIPS_SIZE_DOWN, NULL)) {
            vips_error_clear();
            return;
        }
        out = t[0];
    }
    else
        out = in;
    if (out->BandFmt != VIPS_FORMAT_UCHAR) {
        if (vips_cast(out, &t[1], VIPS_FORMAT_UCHAR, NULL)) {
            vips_error_clear();
            return;
        }
        out = t[1];
    }
    if (out->Bands == 3) {
        if (vips_bandjoin_const1(out, &t[2], 255.0, NULL)) {
            vips_error_clear();
            return;
        }
        out = t[2];
    }
    if (out->Bands != 4 || !(pixels = vips_image_write_to_memory(out, &length))) {
        vips_error_clear();
        return;
    }
    thumbnail->placeholder = pixels;
    thumbnail->placeholder_length = length;
    thumbnail->placeholder_width = out->Xsize;
    thumbnail->placeholder_height = out->Ysize;
    thumbnail->placeholder_microseconds = g_get_monotonic_time() - started;
}
