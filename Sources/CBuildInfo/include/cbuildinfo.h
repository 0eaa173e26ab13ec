/*
 * cbuildinfo: the version and git commit thumbd was built from, baked in at build time.
 *
 * Why this exists: Swift has no valued compile-time defines (`-D` is a flag only), and a
 * generated Swift file would have to be written into the checkout. A C macro can carry a string:
 *     swift build -c release -Xcc -DTHUMBD_VERSION='"0.9.0"' -Xcc -DTHUMBD_COMMIT='"1a2b3c4d5e6f"'
 * or, as packaging/build-deb.sh does, a header thumbd_build_info.h defining both, in a directory
 * given with -Xcc -I (a flag that stays the same from build to build, so only cbuildinfo.c is
 * compiled again for a new commit). A plain `swift build` gets empty strings, which BuildInfo
 * (ThumbServer) turns into "unversioned" and "unknown" and says in words.
 */
#ifndef CBUILDINFO_H
#define CBUILDINFO_H

#ifdef __cplusplus
extern "C" {
#endif

/* THUMBD_VERSION as given to the compiler, else "". A static string. */
const char *cbuildinfo_version(void);

/* THUMBD_COMMIT (the git commit, short, "-dirty" when built from a changed tree), else "". */
const char *cbuildinfo_commit(void);

#ifdef __cplusplus
}
#endif

#endif
