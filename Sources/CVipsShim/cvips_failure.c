/*
 * Turning libvips' process-global error buffer into one sentence per failure.
 *
 * Why this exists: the buffer is shared by every thread, so the text must be copied at the
 * failing call (vips_error_buffer_copy also clears it), and Swift wants a fixed-size, trimmed
 * string rather than a g_malloc'ed one it must remember to free.
 */
#include <string.h>
#include <stdio.h>

#include "cvips_internal.h"

/* Copies `text` into `out` (size `size`) with runs of newlines and blanks folded into "; " and
 * the ends trimmed: libvips ends each error line with "\n". */
static void
cvips_fold_lines(const char *text, char *out, size_t size)
{
    size_t n = 0;
    int pending_break = 0;

    for (const char *p = text; *p != '\0' && n + 1 < size; p++) {
        if (*p == '\n' || *p == '\r') {
            pending_break = n > 0;
            continue;
        }
        if (pending_break) {
            if (n + 3 >= size)
                break;
            out[n++] = ';';
            out[n++] = ' ';
            pending_break = 0;
        }
        out[n++] = *p;
    }
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
        n--;
    out[n] = '\0';
}

int
cvips_fail(cvips_failure *failure, cvips_status status, const char *what)
{
    char *text = vips_error_buffer_copy();
    char folded[CVIPS_MESSAGE_SIZE];

    cvips_fold_lines(text ? text : "", folded, sizeof(folded));
    g_free(text);

    if (strstr(folded, "out of memory") != NULL)
        status = CVIPS_INTERNAL;

    failure->status = status;
    if (folded[0] != '\0')
        snprintf(failure->message, CVIPS_MESSAGE_SIZE, "%s: %s", what, folded);
    else
        snprintf(failure->message, CVIPS_MESSAGE_SIZE, "%s", what);

    return -1;
}

int
cvips_fail_errno(cvips_failure *failure, cvips_status status, const char *what, int errnum)
{
    failure->status = status;
    snprintf(failure->message, CVIPS_MESSAGE_SIZE, "%s: %s", what, g_strerror(errnum));
    return -1;
}
