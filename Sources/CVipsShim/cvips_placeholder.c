/*
 * The placeholder image of a render: shrunk to at most N x N px as 8-bit sRGB RGBA, for a
 * ThumbHash (Sources/ThumbHash).
 *
 * Why this exists: the placeholder must cost no second decode of the source, so it is made here
 * from pixels the render has decoded anyway, which never leave C: the whole picture (a
 * `contain` grid's thumbnail, an ImageMagick load, a video's frame, a square `cover` grid's
 * covering image before its crop: cvips_render.c), else the `cover` thumbnail, the centre
 * square (a render from another thumbnail, a cover box that is not square; a second decode for
 * the whole photo would cost as much as the render: docs/performance.md). A failure to make it
 * never fails the render (the thumbnail is what the client asked for).
 */
#include <string.h>

#include "cvips_internal.h"

void
cvips_placeholder(VipsObject *context, VipsImage *in, int side, cvips_thumbnail *thumbnail)
{
    VipsImage **t = (VipsImage **) vips_object_local_array(context, 5);
    VipsImage *out = in;
    gint64 started = g_get_monotonic_time();
    int alpha = vips_image_hasalpha(in);
    size_t length;
    void *pixels;

    /* `in` is 8-bit sRGB, 3 bands or 4 (cvips_to_srgb8), in memory. A box filter of a whole
     * factor, the same on both axes (vips_shrink by an integer is vips_shrinkh and vips_shrinkv
     * alone), is enough for a hash of the lowest frequencies: the smallest that brings the
     * longer side to `side` or under, and sides rounded up (`ceil`), so the image is 1 to
     * `side` px a side (a panorama's covering image 3930x393, by 40: 99x10; a 1x5000 strip,
     * by 50: 1x100) and keeps the picture's aspect to a pixel. A fractional factor would add
     * vips_reduce, whose vector code libvips compiles anew at each build, and cost twice as
     * much (docs/performance.md, "What a miss pays for its placeholder"). Alpha premultiplied
     * around it, so that the colour of transparent pixels does not bleed in. Never enlarged. */
    if (in->Xsize > side || in->Ysize > side) {
        int factor = (VIPS_MAX(in->Xsize, in->Ysize) + side - 1) / side;

        if (alpha) {
            if (vips_premultiply(out, &t[3], NULL)) {
                vips_error_clear();
                return;
            }
            out = t[3];
        }
        if (vips_shrink(out, &t[0], (double) factor, (double) factor, "ceil", TRUE, NULL)) {
            vips_error_clear();
            return;
        }
        out = t[0];
        if (alpha) {
            if (vips_unpremultiply(out, &t[4], NULL)) {
                vips_error_clear();
                return;
            }
            out = t[4];
        }
    }
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

void
cvips_placeholder_of_whole(VipsObject *context, VipsImage *whole, const cvips_render_options *options,
                           cvips_thumbnail *thumbnail)
{
    VipsImage **t = (VipsImage **) vips_object_local_array(context, 2);
    /* Not a slot of `context`: cvips_to_srgb8 may give back its input itself, unreferenced,
     * and a second slot holding t[1] would release it twice. */
    VipsImage *srgb;
    gint64 started = g_get_monotonic_time();
    int side = options->placeholder_side;
    int result;

    /* Fitted into the box (size DOWN, no crop): the aspect ratio kept, never enlarged;
     * orientation applied and colour turned to sRGB as for the thumbnail. */
    result = options->colour_transform
        ? vips_thumbnail_image(whole, &t[0], side, "height", side, "size", VIPS_SIZE_DOWN,
              "export_profile", "srgb", "intent", VIPS_INTENT_PERCEPTUAL, NULL)
        : vips_thumbnail_image(whole, &t[0], side, "height", side, "size", VIPS_SIZE_DOWN, NULL);
    if (result || !(t[1] = vips_image_copy_memory(t[0])) || cvips_to_srgb8(context, t[1], &srgb)) {
        vips_error_clear();
        return;
    }
    cvips_placeholder(context, srgb, side, thumbnail);
    if (thumbnail->placeholder)
        thumbnail->placeholder_microseconds = g_get_monotonic_time() - started;
}
