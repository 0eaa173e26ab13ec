/*
 * The steps between vips_thumbnail and the encoder: exact size, 8-bit sRGB, white background.
 *
 * Why this exists: the contract (docs/API.md "grid", "output") wants sizes exact to the pixel and
 * every output 8-bit sRGB, while vips_thumbnail rounds on its own terms and passes grey, 16-bit
 * and alpha images through as they are.
 */
#include "cvips_internal.h"

/* A fresh slot in `context`'s local array, so every intermediate image is freed with it. */
static VipsImage **
cvips_slot(VipsObject *context)
{
    return (VipsImage **) vips_object_local_array(context, 1);
}

int
cvips_exact_size(VipsObject *context, VipsImage *in, VipsImage **out, int width, int height)
{
    VipsImage **t;

    if (in->Xsize == width && in->Ysize == height) {
        *out = in;
        return 0;
    }

    /* Short on an axis: stretch by the missing pixel(s); under 1% on any real thumbnail. */
    if (in->Xsize < width || in->Ysize < height) {
        double hscale = in->Xsize < width ? (double) width / in->Xsize : 1.0;
        double vscale = in->Ysize < height ? (double) height / in->Ysize : 1.0;

        t = cvips_slot(context);
        if (vips_resize(in, t, hscale, "vscale", vscale, NULL))
            return -1;
        in = *t;
    }

    /* Too big on an axis: keep the centre. */
    if (in->Xsize > width || in->Ysize > height) {
        int w = VIPS_MIN(width, in->Xsize);
        int h = VIPS_MIN(height, in->Ysize);

        t = cvips_slot(context);
        if (vips_extract_area(in, t, (in->Xsize - w) / 2, (in->Ysize - h) / 2, w, h, NULL))
            return -1;
        in = *t;
    }

    /* Still short (resize rounded down): repeat the edge pixels. */
    if (in->Xsize < width || in->Ysize < height) {
        t = cvips_slot(context);
        if (vips_embed(in, t, 0, 0, width, height, "extend", VIPS_EXTEND_COPY, NULL))
            return -1;
        in = *t;
    }

    *out = in;
    return 0;
}

/* `in` as 8-bit: clipped into 0...255 when wider (float, ushort left after a conversion). */
static int
cvips_cast_uchar(VipsObject *context, VipsImage *in, VipsImage **out)
{
    VipsImage **t;

    if (in->BandFmt != VIPS_FORMAT_UCHAR) {
        t = cvips_slot(context);
        if (vips_cast(in, t, VIPS_FORMAT_UCHAR, NULL))
            return -1;
        in = *t;
    }
    *out = in;
    return 0;
}

int
cvips_to_srgb8(VipsObject *context, VipsImage *in, VipsImage **out)
{
    VipsImage **t;

    /* One or two bands is grey (+ alpha) whatever the tag says; colourspace needs to know. */
    if (in->Bands < 3 && in->Type != VIPS_INTERPRETATION_B_W &&
        in->Type != VIPS_INTERPRETATION_GREY16) {
        t = cvips_slot(context);
        if (vips_copy(in, t,
                "interpretation", in->BandFmt == VIPS_FORMAT_USHORT ?
                    VIPS_INTERPRETATION_GREY16 : VIPS_INTERPRETATION_B_W,
                NULL))
            return -1;
        in = *t;
    }

    /* Grey → 3 bands, RGB16/GREY16 → 8 bits (scaled, not clipped), CMYK/Lab → sRGB. */
    if (in->Type != VIPS_INTERPRETATION_sRGB || in->BandFmt != VIPS_FORMAT_UCHAR ||
        in->Bands < 3) {
        t = cvips_slot(context);
        if (vips_colourspace(in, t, VIPS_INTERPRETATION_sRGB, NULL))
            return -1;
        in = *t;
    }

    /* Anything colourspace left wider than 8 bits (e.g. float): clip into 0...255. */
    return cvips_cast_uchar(context, in, out);
}

int
cvips_flatten_white(VipsObject *context, VipsImage *in, VipsImage **out)
{
    VipsArrayDouble *white;
    VipsImage **t;
    int result;

    if (!vips_image_hasalpha(in)) {
        *out = in;
        return 0;
    }

    white = vips_array_double_newv(1, 255.0);
    t = cvips_slot(context);
    result = vips_flatten(in, t, "background", white, "max_alpha", 255.0, NULL);
    vips_area_unref(VIPS_AREA(white));
    if (result)
        return -1;
    in = *t;

    return cvips_cast_uchar(context, in, out);
}
