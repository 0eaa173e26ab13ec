/*
 * The render job for pixels already decoded elsewhere: a video's poster frame.
 *
 * Why this exists: FFmpeg decodes the frame (in the video helper process); libvips resizes,
 * converts and encodes it, so that sizes, sRGB, stripping and JPEG/WebP stay the one
 * implementation photos use (cvips_deliver).
 */
#include <string.h>

#include "cvips_internal.h"

int
cvips_render_pixels(const unsigned char *pixels, size_t length, int width, int height, int orientation,
                    const cvips_render_options *options, cvips_thumbnail *thumbnail,
                    cvips_failure *failure)
{
    VipsObject *context;
    VipsImage **t;
    int result;

    memset(thumbnail, 0, sizeof(*thumbnail));
    if (options->width < 1 || options->height < 1 || width < 1 || height < 1 ||
        length != (size_t) width * (size_t) height * 3) {
        failure->status = CVIPS_INTERNAL;
        g_strlcpy(failure->message, "the frame or the thumbnail size is invalid", CVIPS_MESSAGE_SIZE);
        return -1;
    }

    context = VIPS_OBJECT(vips_image_new());
    t = (VipsImage **) vips_object_local_array(context, 4);
    /* Wraps the caller's bytes without a copy; they outlive `context`. */
    if (!(t[0] = vips_image_new_from_memory(pixels, length, width, height, 3, VIPS_FORMAT_UCHAR)) ||
        vips_copy(t[0], &t[1], "interpretation", VIPS_INTERPRETATION_sRGB, NULL)) {
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_INTERNAL, "cannot wrap the decoded frame");
    }
    /* The display rotation as the EXIF orientation vips_thumbnail_image applies (no_rotate
     * FALSE), as it does a photo's. */
    vips_image_set_int(t[1], VIPS_META_ORIENTATION, orientation >= 1 && orientation <= 8 ? orientation : 1);
    if (options->crop && options->placeholder_side > 0)
        cvips_placeholder_of_whole(context, t[1], options, thumbnail);
    result = vips_thumbnail_image(t[1], &t[2], options->width,
        "height", options->height,
        "size", options->crop ? VIPS_SIZE_DOWN : VIPS_SIZE_FORCE,
        "crop", options->crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE,
        NULL);
    if (result || !(t[3] = vips_image_copy_memory(t[2]))) {
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_INTERNAL, "cannot resize the decoded frame");
    }
    return cvips_deliver(context, t[3], options, thumbnail, failure);
}
