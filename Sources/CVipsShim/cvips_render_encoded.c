/*
 * A thumbnail from another thumbnail's bytes: a grid derived from a cached larger grid of the
 * same source (the grid switch of a scrolled library), through the same finish as a render
 * from the source itself.
 */
#include <string.h>

#include "cvips_internal.h"

int
cvips_render_encoded(const void *bytes, size_t length, const cvips_render_options *options,
                     cvips_thumbnail *thumbnail, cvips_failure *failure)
{
    VipsObject *context;
    VipsImage **t;

    memset(thumbnail, 0, sizeof(*thumbnail));
    if (options->width < 1 || options->height < 1 || length == 0)
        return cvips_fail(failure, CVIPS_INTERNAL, "a derived thumbnail needs a size and bytes");

    context = VIPS_OBJECT(vips_image_new());
    t = (VipsImage **) vips_object_local_array(context, 1);
    /* The bytes are thumbd's own output: upright, sRGB, no profile, so no orientation or
     * colour transform applies. Shrink-on-load (JPEG) and the centre crop as for a source. */
    if (vips_thumbnail_buffer((void *) bytes, length, &t[0], options->width,
            "height", options->height,
            "size", options->crop ? VIPS_SIZE_DOWN : VIPS_SIZE_FORCE,
            "crop", options->crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE,
            "fail_on", VIPS_FAIL_ON_TRUNCATED,
            NULL)) {
        g_object_unref(context);
        return cvips_fail(failure, CVIPS_INTERNAL, "cannot decode the cached thumbnail");
    }
    return cvips_render_finish(context, t[0], options, thumbnail, failure);
}
