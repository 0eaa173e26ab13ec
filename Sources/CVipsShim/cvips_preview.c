/*
 * The placeholder image of a source's embedded preview: the EXIF thumbnail of a JPEG (IFD1), the
 * thumbnail item of a HEIF, decoded (a few KB, ~160x120 px) instead of the photo.
 *
 * Why this exists: a library's first scan should give every photo a placeholder without decoding
 * it (issue 28). libvips 8.14 parses a JPEG's EXIF with libexif but keeps no IFD1 thumbnail
 * field, only the raw APP1 payload (`exif-data`), so libexif is asked here for the thumbnail in
 * it; heifload has a `thumbnail` option. A preview is trusted only when its shape is the photo's
 * (an editor that crops or resizes a photo often keeps the old preview: corpus
 * `photos/sony-cybershot-small-orientation6.jpg`, 311x450 with a 160x120 preview).
 */
#include <string.h>

#include <libexif/exif-data.h>

#include "cvips_internal.h"

/* The largest preview side decoded, px: EXIF thumbnails are ~160 px, HEIF ones 240-512; a
 * preview that declares more is not a preview (a bomb fits in APP1's 64 KB). */
#define CVIPS_PREVIEW_MAX_SIDE 1024

/* Whether a preview of `pw` x `ph` px has the shape of a photo of `w` x `h` px: each side within
 * 1 px of the photo's shape scaled to the other side (what rounding a downscale to whole pixels
 * gives: google-pixel-12mp-gps.jpg, 4048x3036, has 253x189). */
static int
cvips_preview_fits(int pw, int ph, int w, int h)
{
    double height = (double) pw * h / w;
    double width = (double) ph * w / h;

    return height - ph <= 1.0 && ph - height <= 1.0 && width - pw <= 1.0 && pw - width <= 1.0;
}

/* Decodes `lazy` (a preview's header, loaded lazily) into memory unless it declares more than
 * CVIPS_PREVIEW_MAX_SIDE a side; NULL when it does or does not decode (libvips' error cleared). */
static VipsImage *
cvips_preview_decode(VipsImage *lazy)
{
    VipsImage *decoded = NULL;

    if (lazy->Xsize <= CVIPS_PREVIEW_MAX_SIDE && lazy->Ysize <= CVIPS_PREVIEW_MAX_SIDE)
        decoded = vips_image_copy_memory(lazy);
    vips_error_clear();
    return decoded;
}

/* The EXIF thumbnail of a JPEG whose header is `photo` (its `exif-data`), decoded; NULL when
 * there is none or it does not decode. */
static VipsImage *
cvips_exif_thumbnail(VipsImage *photo)
{
    const void *blob;
    size_t length;
    ExifData *exif;
    VipsImage *lazy;
    VipsImage *decoded = NULL;

    if (!vips_image_get_typeof(photo, VIPS_META_EXIF_NAME) ||
        vips_image_get_blob(photo, VIPS_META_EXIF_NAME, &blob, &length) ||
        length > G_MAXUINT ||
        !(exif = exif_data_new_from_data(blob, (unsigned int) length)))
        return NULL;
    /* The thumbnail's bytes belong to `exif`: decoded before it goes. */
    if (exif->data && exif->size > 0 &&
        (lazy = vips_image_new_from_buffer(exif->data, exif->size, "",
             "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL))) {
        decoded = cvips_preview_decode(lazy);
        g_object_unref(lazy);
    }
    vips_error_clear();
    exif_data_unref(exif);
    return decoded;
}

/* The thumbnail item of the HEIF open on `fd` whose image is `photo`, decoded; NULL when there
 * is none (heifload then gives the image itself) or it does not decode. */
static VipsImage *
cvips_heif_thumbnail(int fd, VipsImage *photo)
{
    cvips_failure ignored;
    VipsSource *source;
    VipsImage *lazy;
    VipsImage *decoded = NULL;

    if (!(source = cvips_source_at_start(fd, &ignored)))
        return NULL;
    lazy = vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL,
        "thumbnail", TRUE, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    g_object_unref(source);
    if (lazy && (lazy->Xsize != photo->Xsize || lazy->Ysize != photo->Ysize))
        decoded = cvips_preview_decode(lazy);
    VIPS_UNREF(lazy);
    vips_error_clear();
    return decoded;
}

int
cvips_preview_read(int fd, int side, cvips_preview *preview, cvips_failure *failure)
{
    VipsObject *context;
    VipsImage **t;
    VipsSource *source;
    VipsImage *photo;
    VipsImage *shown;
    VipsImage *srgb;
    const char *coder;
    const char *loader = "";
    int orientation, heif;

    memset(preview, 0, sizeof(*preview));
    if (!(source = cvips_source_at_start(fd, failure)))
        return -1;
    if (cvips_source_format(source, fd, &coder, failure)) {
        g_object_unref(source);
        return -1;
    }
    if (coder) {   /* ImageMagick's formats (BMP, ICO, TGA): no preview read */
        g_object_unref(source);
        return 0;
    }
    photo = vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    g_object_unref(source);
    if (!photo)
        return cvips_fail(failure, CVIPS_UNSUPPORTED, "the source is not a readable image");
    context = VIPS_OBJECT(vips_image_new());
    t = (VipsImage **) vips_object_local_array(context, 4);
    t[0] = photo;
    if (vips_image_get_typeof(photo, VIPS_META_LOADER))
        vips_image_get_string(photo, VIPS_META_LOADER, &loader);
    heif = g_str_has_prefix(loader, "heifload");
    /* The photo as shown; heifload has applied irot/imir already (orientation 1), to its
     * thumbnail too. */
    orientation = vips_image_get_orientation(photo);
    preview->photo_width = orientation >= 5 ? photo->Ysize : photo->Xsize;
    preview->photo_height = orientation >= 5 ? photo->Xsize : photo->Ysize;

    if (g_str_has_prefix(loader, "jpegload"))
        t[1] = cvips_exif_thumbnail(photo);
    else if (heif)
        t[1] = cvips_heif_thumbnail(fd, photo);
    if (!t[1]) {
        g_object_unref(context);
        return 0;
    }

    /* A JPEG's thumbnail is stored as its pixels are: the photo's orientation turns both. */
    preview->preview_width = orientation >= 5 ? t[1]->Ysize : t[1]->Xsize;
    preview->preview_height = orientation >= 5 ? t[1]->Xsize : t[1]->Ysize;
    if (!cvips_preview_fits(preview->preview_width, preview->preview_height,
            preview->photo_width, preview->photo_height)) {
        preview->status = CVIPS_PREVIEW_MISMATCHED;
        g_object_unref(context);
        return 0;
    }

    shown = t[1];
    if (!heif && orientation != 1) {
        vips_image_set_int(t[1], VIPS_META_ORIENTATION, orientation);
        if (vips_autorot(t[1], &t[2], NULL) || !(t[3] = vips_image_copy_memory(t[2]))) {
            vips_error_clear();
            g_object_unref(context);
            return 0;
        }
        shown = t[3];
    }
    /* Not into a slot of `context`: cvips_to_srgb8 may give back `shown` itself, unreferenced. */
    if (cvips_to_srgb8(context, shown, &srgb)) {
        vips_error_clear();
        g_object_unref(context);
        return 0;
    }
    cvips_placeholder(context, srgb, side, &preview->image);
    preview->status = preview->image.placeholder ? CVIPS_PREVIEW_MADE : CVIPS_PREVIEW_ABSENT;
    g_object_unref(context);
    return 0;
}
