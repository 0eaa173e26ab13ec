/*
 * libvips process set-up and per-thread clean-up.
 *
 * Why this exists: VIPS_INIT is a macro and must run once per process before any other call;
 * g_once makes that safe when several render threads arrive at once.
 */
#include <malloc.h>
#include <stdio.h>

#include "cvips_internal.h"

/* The text of a failed vips_init, kept for every later caller. */
static char cvips_start_error[CVIPS_MESSAGE_SIZE];

int
cvips_start(int concurrency, cvips_failure *failure)
{
    /* 0: not yet; 1: started; 2: vips_init failed. */
    static gsize state = 0;

    if (g_once_init_enter(&state)) {
        gsize result = 1;

        if (VIPS_INIT("thumbd")) {
            cvips_failure init_failure;

            cvips_fail(&init_failure, CVIPS_INTERNAL, "vips_init failed");
            g_strlcpy(cvips_start_error, init_failure.message, sizeof(cvips_start_error));
            result = 2;
        }
        else {
            /* The server keeps its own memory and disk caches; libvips' operation cache
             * would only hold decoded images and memory. */
            vips_cache_set_max(0);
            cvips_formats_restrict();
            vips_concurrency_set(concurrency > 0 ? concurrency : 1);
        }
        g_once_init_leave(&state, result);
    }

    if (state == 2) {
        failure->status = CVIPS_INTERNAL;
        g_strlcpy(failure->message, cvips_start_error, CVIPS_MESSAGE_SIZE);
        return -1;
    }

    return 0;
}

void
cvips_job_end(void)
{
    vips_error_clear();
    vips_thread_shutdown();
}

/*
 * Why this exists: mallopt lives in <malloc.h>, which Swift's Glibc module does not import.
 * libvips' worker threads each get a glibc heap arena, and the arenas fragment: resident memory
 * grows far past what is in use. Servers built on libvips (imgproxy) run with two arenas.
 */
int
cvips_limit_malloc_arenas(int arenas)
{
    return mallopt(M_ARENA_MAX, arenas);
}
