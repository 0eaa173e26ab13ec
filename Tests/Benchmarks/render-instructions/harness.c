/*
 * One kind of render of every photo in a folder, once, for callgrind to count
 * (Tests/Benchmarks/render-instructions.sh): instructions do not swing with a shared machine's
 * load as seconds do, so a change of a few percent in the render path shows.
 *
 * Usage: harness FOLDER KIND, KIND one of
 *   thumbd-placeholder  what a miss at grid 3 runs: the header read, then cvips_render of 393x393
 *                       cover, JPEG Q80, with a placeholder of at most 100 px (a photo without one)
 *   thumbd              the same without the placeholder (a photo that has one)
 *   vipsthumbnail       vipsthumbnail -s '393x393>' --smartcrop centre [Q=80,strip]'s pipeline:
 *                       vips_thumbnail (crop centre) and vips_jpegsave_buffer
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vips/vips.h>

#include "cvips_shim.h"

static int
render(const char *path, const char *kind)
{
    cvips_failure failure;
    cvips_header header;
    cvips_thumbnail thumbnail;
    int fd, result, swapped;

    if (strcmp(kind, "vipsthumbnail") == 0) {
        VipsImage *image;
        void *bytes;
        size_t length;

        if (vips_thumbnail(path, &image, 393, "height", 393, "size", VIPS_SIZE_DOWN,
                "crop", VIPS_INTERESTING_CENTRE, NULL))
            return -1;
        result = vips_jpegsave_buffer(image, &bytes, &length, "Q", 80, "strip", TRUE, NULL);
        g_object_unref(image);
        if (result == 0)
            g_free(bytes);
        return result;
    }
    if ((fd = open(path, O_RDONLY)) < 0)
        return -1;
    if (cvips_header_read(fd, &header, &failure)) {
        close(fd);
        return -1;
    }
    swapped = header.orientation >= 5;
    cvips_render_options options = {
        .width = 393, .height = 393, .crop = 1, .format = CVIPS_FORMAT_JPEG, .quality = 80,
        .png_compression = 6, .colour_transform = header.needs_colour_transform,
        .placeholder_side = strcmp(kind, "thumbd-placeholder") == 0 ? 100 : 0,
        .source_width = swapped ? header.height : header.width,
        .source_height = swapped ? header.width : header.height,
    };
    result = cvips_render(fd, &options, &thumbnail, &failure);
    if (result == 0)
        cvips_thumbnail_free(&thumbnail);
    close(fd);
    cvips_job_end();
    return result;
}

int
main(int argc, char **argv)
{
    cvips_failure failure;
    struct dirent *entry;
    DIR *folder;
    int photos = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s FOLDER thumbd-placeholder|thumbd|vipsthumbnail\n", argv[0]);
        return 2;
    }
    if (cvips_start(1, &failure)) {
        fprintf(stderr, "%s\n", failure.message);
        return 1;
    }
    if (!(folder = opendir(argv[1]))) {
        perror(argv[1]);
        return 1;
    }
    while ((entry = readdir(folder))) {
        char path[4096];

        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", argv[1], entry->d_name);
        if (render(path, argv[2])) {
            fprintf(stderr, "%s: cannot render\n", path);
            return 1;
        }
        photos++;
    }
    closedir(folder);
    printf("%d\n", photos);
    return 0;
}
