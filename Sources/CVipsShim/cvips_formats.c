/*
 * The formats thumbd reads: one list, for the header reads of the listing and for the renders.
 *
 * Why this exists: the listing read headers through vips_image_new_from_source, which falls back
 * to libvips' buffer loaders when no source loader claims a file, while renders went through
 * vips_thumbnail_source, which does not: BMP, ICO and TGA reached ImageMagick's loader
 * (magickload_buffer) in the first and "source is not in a known format" in the second, so they
 * were listed and never rendered. Both paths now ask cvips_source_format() first, and libvips
 * itself is kept to the same list (vips_operation_block_set, libvips 8.13+), so no other loader
 * can be reached by a path this file did not think of.
 *
 * The list (README "Formats"): what phones, cameras, scanners and photo apps write. JPEG, PNG,
 * WebP, GIF, TIFF and HEIF/AVIF by the loaders libvips trusts (not flagged "untrusted" in
 * `vips -l`), and JPEG XL, flagged only for being new in 8.14. BMP and ICO by ImageMagick
 * (Debian's libvips links ImageMagick 6 and ships its coders), each through the one coder this
 * file picks from the file's first bytes and forces ("BMP:/proc/self/fd/N"): the loader that lets
 * ImageMagick choose among its ~200 coders by itself (magickload_buffer: PostScript, MVG, MSL, XCF,
 * ... many parsers of hostile input; imgproxy and others turn it off or allow-list it) stays
 * blocked. Not read (not listed, 415): PDF, SVG, PostScript (documents and drawings, not photos,
 * parsed by poppler, librsvg and Ghostscript), JPEG 2000, PPM/PNM, FITS, Radiance HDR, OpenEXR,
 * OpenSlide, Analyze, MATLAB, CSV, raw and libvips' own .v and matrix formats; and TGA: this
 * ImageMagick (6.9.11) gives a file stored bottom-up as TGA 2.0 says (the usual way) upside
 * down, and a greyscale one as grey plus an alpha band of the same values (found by a fresh-eyes
 * session with files written by the spec), so it was listed and rendered wrong.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cvips_internal.h"

/* libvips loader classes thumbd reads (each with its file, buffer and source variants). */
static const char *const cvips_libvips_loaders[] = {
    "VipsForeignLoadJpeg",
    "VipsForeignLoadPng",
    "VipsForeignLoadWebp",
    "VipsForeignLoadNsgif",
    "VipsForeignLoadTiff",
    "VipsForeignLoadHeif",   /* HEIC, HEIF, AVIF */
    "VipsForeignLoadJxl",
};

/* Whether `head` (the first `length` bytes of a file of `size` bytes) is this format. */
typedef int (*cvips_sniff)(const unsigned char *head, size_t length, off_t size);

static int cvips_is_bmp(const unsigned char *head, size_t length, off_t size);
static int cvips_is_ico(const unsigned char *head, size_t length, off_t size);

/* Formats read by ImageMagick, each through the one coder named here. */
static const struct {
    const char *coder;
    cvips_sniff sniff;
} cvips_magick_formats[] = {
    { "BMP", cvips_is_bmp },
    { "ICO", cvips_is_ico },
};

int
cvips_formats_revision(void)
{
    /* 1: the list above with TGA (before it, every loader libvips had was read); 2: without TGA;
     * 3: videos too (MP4, MOV, M4V, WebM, AVI through FFmpeg: Rendering's VideoFormats), so
     * that such files an earlier list decided were not images are read again; 4: what a video's
     * header decides changed (its size as displayed with non-square pixels, a container date
     * of an unset clock taken for none), so every header is read again once; 5: a file in a
     * format of the list whose header does not decode (a lossless JPEG) is counted and said, not
     * kept as a non-image, so that those an earlier index kept so are read again. */
    return 5;
}

void
cvips_formats_restrict(void)
{
    /* Every loader blocked, then the list let through: "VipsForeignLoad" blocks the loaders'
     * base class and all below it (vips_operation_block_set, libvips 8.13). magickload (the
     * file variant) is only ever called by cvips_magick_load with a coder forced; libvips
     * would pick it by itself only for a file name, and the shim never gives libvips a name. */
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (size_t i = 0; i < G_N_ELEMENTS(cvips_libvips_loaders); i++)
        vips_operation_block_set(cvips_libvips_loaders[i], FALSE);
    vips_operation_block_set("VipsForeignLoadMagickFile", FALSE);
}

/* Whether loader class `name` (as vips_foreign_find_load_source gives it) is one of the list. */
static int
cvips_loader_allowed(const char *name)
{
    GType type = g_type_from_name(name);

    if (!type)
        return 0;
    for (size_t i = 0; i < G_N_ELEMENTS(cvips_libvips_loaders); i++) {
        GType allowed = g_type_from_name(cvips_libvips_loaders[i]);

        if (allowed && g_type_is_a(type, allowed))
            return 1;
    }
    return 0;
}

/* The ImageMagick coder for the file open on `fd`, by its first bytes; NULL for none. */
static const char *
cvips_magick_coder(int fd)
{
    unsigned char head[64];
    struct stat st;
    ssize_t n;

    if (fstat(fd, &st) != 0)
        return NULL;
    n = pread(fd, head, sizeof head, 0);
    if (n <= 0)
        return NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(cvips_magick_formats); i++)
        if (cvips_magick_formats[i].sniff(head, (size_t) n, st.st_size))
            return cvips_magick_formats[i].coder;
    return NULL;
}

int
cvips_source_format(VipsSource *source, int fd, const char **coder, cvips_failure *failure)
{
    const char *loader = vips_foreign_find_load_source(source);

    *coder = NULL;
    if (loader) {
        const char *nickname = vips_nickname_find(g_type_from_name(loader));

        if (cvips_loader_allowed(loader))
            return 0;
        failure->status = CVIPS_UNSUPPORTED;
        snprintf(failure->message, CVIPS_MESSAGE_SIZE,
            "the source is in a format thumbd does not read (libvips %s; see docs/thumbnails.md \"Formats\")",
            nickname ? nickname : loader);
        return -1;
    }
    if ((*coder = cvips_magick_coder(fd))) {
        vips_error_clear();   /* libvips' "source is not in a known format" */
        return 0;
    }
    return cvips_fail(failure, CVIPS_UNSUPPORTED, "the source is not in a format thumbd reads (see docs/thumbnails.md \"Formats\")");
}

int
cvips_magick_load(int fd, const char *coder, VipsImage **out, cvips_failure *failure)
{
    char name[64];

    /* ImageMagick opens the name itself: /proc/self/fd/N is the file open on `fd` (the one
     * checked, whatever its path now); "CODER:" makes ImageMagick use that coder and no other. */
    snprintf(name, sizeof name, "%s:/proc/self/fd/%d", coder, fd);
    if (vips_magickload(name, out, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL)) {
        char what[64];

        snprintf(what, sizeof what, "cannot read the source as %s", coder);
        return cvips_fail(failure, CVIPS_UNSUPPORTED, what);
    }
    /* Neither format carries EXIF: an "orientation" ImageMagick sets of its own is not one. */
    vips_image_remove(*out, VIPS_META_ORIENTATION);
    return 0;
}

/* Little-endian fields. */
static unsigned
cvips_le16(const unsigned char *p)
{
    return (unsigned) p[0] | (unsigned) p[1] << 8;
}

static guint32
cvips_le32(const unsigned char *p)
{
    return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

/* Windows bitmap: "BM", then a bitmap header of one of its known sizes (Microsoft's BMP file
 * format: BITMAPCOREHEADER 12, OS/2 16 and 64, BITMAPINFOHEADER 40, 52, 56, V4 108, V5 124) with
 * a width and height, pixels starting inside the file, and a file long enough for the pixels it
 * declares (uncompressed: every row, padded to 4 bytes; run-length: 2 bytes per 255 pixels at
 * least), so that a small file declaring a huge image is refused before ImageMagick allocates it. */
static int
cvips_is_bmp(const unsigned char *head, size_t length, off_t size)
{
    guint32 offset, dib, compression = 0;
    guint64 width, height, depth, need;

    if (length < 26 || head[0] != 'B' || head[1] != 'M')
        return 0;
    offset = cvips_le32(head + 10);
    dib = cvips_le32(head + 14);
    if (!(dib == 12 || dib == 16 || dib == 40 || dib == 52 || dib == 56 || dib == 64 || dib == 108 ||
          dib == 124) || offset < 14 + dib || (off_t) offset >= size)
        return 0;
    if (dib == 12) {
        width = cvips_le16(head + 18);
        height = cvips_le16(head + 20);
        depth = cvips_le16(head + 24);
    }
    else {
        gint32 h = (gint32) cvips_le32(head + 22);

        if (length < 34)
            return 0;
        width = cvips_le32(head + 18);
        height = h < 0 ? (guint64) -(gint64) h : (guint64) h;   /* negative: rows top-down */
        depth = cvips_le16(head + 28);
        compression = cvips_le32(head + 30);
    }
    if (width == 0 || width > G_MAXINT32 || height == 0 || depth == 0 || depth > 64)
        return 0;
    if (compression == 0 || compression == 3 || compression == 6)   /* RGB, BITFIELDS, ALPHABITFIELDS */
        need = offset + (width * depth + 31) / 32 * 4 * height;
    else if (compression == 1 || compression == 2)                  /* RLE8, RLE4 */
        need = offset + width * height / 255 * 2;
    else                                                            /* JPEG or PNG inside */
        need = offset + 1;
    return (guint64) size >= need;
}

/* Windows icon: reserved 0, type 1 (2 is a cursor), at least one image, whose directory entry
 * (16 bytes each: its size in bytes at 8, its offset at 12) points past the directory and lies
 * inside the file. */
static int
cvips_is_ico(const unsigned char *head, size_t length, off_t size)
{
    unsigned count;
    guint32 bytes, offset;

    if (length < 22 || cvips_le16(head) != 0 || cvips_le16(head + 2) != 1)
        return 0;
    count = cvips_le16(head + 4);
    bytes = cvips_le32(head + 6 + 8);
    offset = cvips_le32(head + 6 + 12);
    return count >= 1 && bytes > 0 && offset >= 6 + 16 * count &&
        (off_t) offset + bytes <= size;
}
