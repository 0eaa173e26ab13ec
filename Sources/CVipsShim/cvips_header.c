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

/* Whether `image`'s embedded ICC profile is the sRGB IEC61966-2.1 profile that cameras and
 * editors embed (HP's, version 2.1, made 1998-02-09: 3,144 bytes), by its header's fields: the
 * rule imgproxy applies before it skips a transform (vips/vips.c, vips_icc_is_srgb_iec61966).
 * Other sRGB profiles (a phone's own v4 one, say) are transformed as any profile is. */
static int
cvips_profile_is_srgb(VipsImage *image)
{
    static const unsigned char version[] = { 2, 16, 0, 0 };
    static const unsigned char created[] = { 7, 206, 0, 2, 0, 9 };   /* 1998-02-09 */
    const unsigned char *profile;
    size_t length;

    if (vips_image_get_blob(image, VIPS_META_ICC_NAME, (const void **) &profile, &length)) {
        vips_error_clear();
        return 0;
    }
    return length >= 128 &&
        memcmp(profile + 8, version, sizeof(version)) == 0 &&     /* profile version */
        memcmp(profile + 16, "RGB ", 4) == 0 &&                    /* colour space */
        memcmp(profile + 24, created, sizeof(created)) == 0 &&     /* date of creation */
        memcmp(profile + 48, "IEC ", 4) == 0 &&                    /* device manufacturer */
        memcmp(profile + 52, "sRGB", 4) == 0 &&                    /* device model */
        memcmp(profile + 80, "HP  ", 4) == 0;                      /* profile creator */
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
    /* From here the format is one thumbd reads: a header that does not decode is said apart
     * (CVIPS_UNDECODABLE), so that the listing can tell which files it leaves out. */
    if (coder) {
        g_object_unref(source);
        if (cvips_magick_load(fd, coder, &image, failure)) {
            if (failure->status == CVIPS_UNSUPPORTED)
                failure->status = CVIPS_UNDECODABLE;
            return -1;
        }
    }
    else {
        image = vips_image_new_from_source(source, "",
            "access", VIPS_ACCESS_SEQUENTIAL,
            NULL);
        g_object_unref(source);
        if (!image)
            return cvips_fail(failure, CVIPS_UNDECODABLE, "the source is not a readable image");
    }

    header->width = image->Xsize;
    header->height = image->Ysize;
    /* libvips clips the tag to 1...8 and gives 1 when it is absent; heifload has already
     * applied irot/imir and removed the tag. */
    header->orientation = vips_image_get_orientation(image);
    header->pages = vips_image_get_n_pages(image);
    header->has_alpha = vips_image_hasalpha(image) ? 1 : 0;

    /* An ICC transform costs a render dearly even when it changes nothing (libvips 8.14 imports
     * profile-less sRGB with its built-in sRGB profile; docs/performance.md, "What a miss pays
     * for its placeholder"): only ask for one when it matters. An RGB photo whose embedded
     * profile is sRGB IEC61966-2.1 itself is as good as one without. */
    {
        VipsInterpretation space = vips_image_guess_interpretation(image);
        int plain = space == VIPS_INTERPRETATION_sRGB || space == VIPS_INTERPRETATION_B_W ||
            space == VIPS_INTERPRETATION_RGB16 || space == VIPS_INTERPRETATION_GREY16;
        int rgb = space == VIPS_INTERPRETATION_sRGB || space == VIPS_INTERPRETATION_RGB16;
        int profiled = vips_image_get_typeof(image, VIPS_META_ICC_NAME) &&
            !(rgb && cvips_profile_is_srgb(image));
        header->needs_colour_transform = profiled || !plain ? 1 : 0;
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
