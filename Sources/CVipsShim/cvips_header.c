/*
 * Reading a source's header without decoding pixels.
 *
 * Why this exists: the pixel limit must be judged before any decode (a 522 KB PNG can declare
 * 65536x65536), and the listing needs size, orientation and capture time. With sequential
 * access, vips_image_new_from_source only parses the header. Which loader reads it is decided as
 * for a render (cvips_source_format), so a file is listed exactly when it can be rendered.
 */
#include <string.h>

#include "cvips_internal.h"

/* Copies the string field `name` into `out` (size `size`), cutting the " (raw, TYPE, n
 * components, n bytes)" description libvips appends to EXIF values. Leaves "" when absent. */
static void
cvips_copy_exif_text(VipsImage *image, const char *name, char *out, size_t size)
{
    const char *value;
    const char *description;
    size_t n;

    out[0] = '\0';
    if (!vips_image_get_typeof(image, name) ||
        vips_image_get_string(image, name, &value))
        return;

    description = strstr(value, " (");
    n = description ? (size_t) (description - value) : strlen(value);
    if (n >= size)
        n = size - 1;
    memcpy(out, value, n);
    out[n] = '\0';
}

int
cvips_header_read(int fd, cvips_header *header, cvips_failure *failure)
{
    VipsSource *source;
    VipsImage *image;
    const char *loader;
    const char *coder;

    memset(header, 0, sizeof(*header));

    if (!(source = cvips_source_at_start(fd, failure)))
        return -1;
    /* The same decision as a render's (cvips_formats.c): what is listed renders. */
    if (cvips_source_format(source, fd, &coder, failure)) {
        g_object_unref(source);
        return -1;
    }
    if (coder) {
        g_object_unref(source);
        if (cvips_magick_load(fd, coder, &image, failure))
            return -1;
    }
    else {
        image = vips_image_new_from_source(source, "",
            "access", VIPS_ACCESS_SEQUENTIAL,
            NULL);
        g_object_unref(source);
        if (!image)
            return cvips_fail(failure, CVIPS_UNSUPPORTED, "the source is not a readable image");
    }

    header->width = image->Xsize;
    header->height = image->Ysize;
    /* libvips clips the tag to 1...8 and gives 1 when it is absent; heifload has already
     * applied irot/imir and removed the tag. */
    header->orientation = vips_image_get_orientation(image);
    header->pages = vips_image_get_n_pages(image);
    header->has_alpha = vips_image_hasalpha(image) ? 1 : 0;

    /* An ICC transform costs ~13 ms a photo even when it changes nothing (libvips 8.14 imports
     * profile-less sRGB with its built-in sRGB profile): only ask for one when it matters. */
    {
        VipsInterpretation space = vips_image_guess_interpretation(image);
        int plain = space == VIPS_INTERPRETATION_sRGB || space == VIPS_INTERPRETATION_B_W ||
            space == VIPS_INTERPRETATION_RGB16 || space == VIPS_INTERPRETATION_GREY16;
        header->needs_colour_transform =
            vips_image_get_typeof(image, VIPS_META_ICC_NAME) || !plain ? 1 : 0;
    }

    /* Named as the file loaders are ("jpegload", not "jpegload_source"). */
    if (vips_image_get_typeof(image, VIPS_META_LOADER) &&
        !vips_image_get_string(image, VIPS_META_LOADER, &loader)) {
        g_strlcpy(header->loader, loader, sizeof(header->loader));
        if (g_str_has_suffix(header->loader, "_source"))
            header->loader[strlen(header->loader) - strlen("_source")] = '\0';
    }

    cvips_copy_exif_text(image, "exif-ifd2-DateTimeOriginal",
        header->date_time_original, sizeof(header->date_time_original));
    cvips_copy_exif_text(image, "exif-ifd2-OffsetTimeOriginal",
        header->offset_time_original, sizeof(header->offset_time_original));

    g_object_unref(image);

    return 0;
}
