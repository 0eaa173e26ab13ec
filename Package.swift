// swift-tools-version:6.0
// thumbd: an image thumbnail cache server. Data flows socket → HTTP → ThumbServer (routes) →
// Library (URL path → source file) → Thumbnails (memory cache → disk cache → render scheduler) →
// Rendering (libvips) → respond.
// The server is Linux only (epoll, inotify, memfds, preadv2 in CLinux). `platforms` is for the
// one product apps build on Apple platforms, ThumbdClient (Foundation and ThumbHash only; async
// sequences and `Duration` need macOS 13 / iOS 16); SwiftPM reads that list for Apple platforms
// alone, so it changes nothing on Linux.
import PackageDescription

let package = Package(
    name: "thumbd",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .visionOS(.v1)],
    products: [
        .executable(name: "thumbd", targets: ["thumbd"]),
        // For the parser fuzzer in Fuzz/ (a separate package that depends on this one).
        .library(name: "HTTP", targets: ["HTTP"]),
        // For apps: thumbd in the shape of PHCachingImageManager (docs/client.md).
        .library(name: "ThumbdClient", targets: ["ThumbdClient"]),
    ],
    targets: [
        // libvips 8.14 from Debian (`libvips-dev`). Its headers sit in the default include path and
        // need only GLib's: pkg-config `gobject-2.0` gives those. (`vips.pc` would bring in the
        // flags of every image library libvips links, among them OpenEXR's `-pthread`, which
        // SwiftPM refuses with a warning on every build.) CVipsShim links `vips` itself.
        .systemLibrary(name: "CVips", pkgConfig: "gobject-2.0", providers: [.apt(["libvips-dev"])]),
        // xxHash from Debian (`libxxhash-dev`): cache-key digests and disk-entry checksums.
        .systemLibrary(name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
        // zlib from Debian (`zlib1g-dev`): CRC32, as nginx's consistent hash computes it.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // SQLite from Debian (`libsqlite3-dev`): the persisted library index.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // OpenSSL 3's libcrypto from Debian (`libssl-dev`): HMAC-SHA256 of signed thumbnail URLs,
        // SHA-256 of client keys, CRYPTO_memcmp. Used only through CCryptoShim.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // Byte-buffer wrappers around those libcrypto calls; `EVP_MD *` never leaves C.
        .target(name: "CCryptoShim", dependencies: ["CCrypto"]),
        // Fixed-argument wrappers around libvips' variadic C API; `VipsImage *` never leaves C.
        // libwebpmux (Debian `libwebp-dev`) drops the EXIF chunk libvips 8.14 always writes to WebP.
        // libexif 0.6 from Debian (`libexif-dev`, already a dependency of libvips, which parses
        // EXIF with it): the JPEG's EXIF thumbnail (IFD1), which libvips 8.14 does not expose.
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .target(name: "CVipsShim", dependencies: ["CVips", "CExif"], linkerSettings: [.linkedLibrary("vips"), .linkedLibrary("webpmux"), .linkedLibrary("webp")]),
        // FFmpeg 5.1 from Debian (`libavformat-dev`, `libavcodec-dev`, `libavutil-dev`,
        // `libswscale-dev`, `libavfilter-dev` for HDR tone-mapping): headers only; CVideoShim
        // links the libraries itself (a system library's `link` does not reach a C target).
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libavfilter-dev"])]),
        // Video containers and poster frames through libav, and the helper process that decodes
        // them; no libav type leaves C.
        .target(name: "CVideoShim", dependencies: ["CFFmpeg"], linkerSettings: [
            .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil"), .linkedLibrary("swscale"),
            .linkedLibrary("avfilter"),
        ]),
        // Linux calls Swift's Glibc lacks: epoll(7), eventfd(2), thread names, preadv2(RWF_NOWAIT),
        // sealed memfds, inotify(7), renameat2(RENAME_NOREPLACE).
        .target(name: "CLinux"),
        // The version and git commit baked in at build time: C macros THUMBD_VERSION and
        // THUMBD_COMMIT (`-Xcc -DTHUMBD_VERSION='"0.9.0"'`, as packaging/build-deb.sh gives them),
        // "dev" and "unknown" for a plain `swift build`. Swift has no valued defines.
        .target(name: "CBuildInfo"),
        // `ThreadRole` (event loop or render worker, asserted in debug builds) and, in
        // ThreadSanitizer builds (`-DTHUMBD_TSAN`), a `Mutex` on pthread_mutex that TSan
        // understands, in place of Synchronization's (futexes TSan cannot see).
        .target(name: "Locking"),
        .target(name: "Console"),
        // HTTP/1.1 parser, serializer, RFC 9110 list scanning and the socket server (epoll event
        // loops; Dispatch for accepting and timers). Knows nothing of thumbnails.
        .target(name: "HTTP", dependencies: ["CLinux", "Locking"]),
        // Grid specs and the libvips renderer: source file → thumbnail bytes; videos' poster
        // frames through the video helper process.
        .target(name: "Rendering", dependencies: ["CVipsShim", "CVideoShim", "Locking"]),
        // Evan Wallace's ThumbHash in Swift: a ≤100x100 RGBA image ⇄ a 5-25 byte placeholder.
        .target(name: "ThumbHash"),
        // The photo library: which files are assets and how a URL's path reaches one (resolve),
        // the listing index (headers read once, persisted in SQLite) and the inotify watch that
        // tells a memoised URL nothing changed. Reads sources' headers, never renders.
        .target(name: "Library", dependencies: ["Rendering", "CSQLite", "CLinux", "Locking", "Console"]),
        // A resolved asset → its thumbnail: cache key, memory and disk caches, render scheduler,
        // coalescing pipeline, prefetch, the placeholders renders make and their backfill.
        .target(name: "Thumbnails", dependencies: ["Library", "Rendering", "ThumbHash", "CXXHash", "CLinux", "Locking", "Console"]),
        // The route table, URL ⇄ request, path resolution, ETag/304, errors ⇄ status, /stats; the
        // config (file + environment + flags, mapped to each subsystem) and the wiring of a whole
        // server (`Thumbd`), which the end-to-end tests build without a process; signed thumbnail
        // URLs and client keys (through CCryptoShim).
        // The gallery at `/` is files in Sources/ThumbServer/Gallery/, embedded in the binary at
        // build (SwiftPM's `PackageResources`: byte arrays, no file read at run time).
        .target(name: "ThumbServer", dependencies: ["HTTP", "Library", "Thumbnails", "Locking", "CCryptoShim", "Cluster", "CBuildInfo", "Console"],
                resources: [
                    .embedInCode("Gallery/gallery.html"), .embedInCode("Gallery/gallery.css"),
                    .embedInCode("Gallery/gallery-placeholder.js"), .embedInCode("Gallery/gallery-grid.js"),
                    .embedInCode("Gallery/gallery-preheat.js"), .embedInCode("Gallery/gallery-library.js"),
                    .embedInCode("Gallery/gallery-viewer.js"), .embedInCode("Gallery/gallery-stats.js"),
                ]),
        // Several nodes behind nginx's consistent hash: which node nginx sends a key to (`PeerRing`).
        .target(name: "Cluster", dependencies: ["CZlib", "Locking"]),
        // The executable only: main, SIGINT/SIGTERM, exit status (config and wiring are ThumbServer's).
        .executableTarget(name: "thumbd", dependencies: ["ThumbServer", "Rendering", "Console"]),
        // The client library for apps (docs/client.md): the listing, thumbnails with their
        // placeholder first, prefetch and the preheat rule, `/stats`. Foundation (URLSession;
        // FoundationNetworking on Linux) and ThumbHash only, so it builds for iOS and macOS too.
        .target(name: "ThumbdClient", dependencies: ["ThumbHash"]),
        // The scroll benchmark's client (Tests/Benchmarks/scroll.py) made with ThumbdClient alone.
        .executableTarget(name: "thumbd-client-scroll", dependencies: ["ThumbdClient"]),

        // What the test targets share: a renderer whose renders a test holds and releases, a
        // temporary directory, the fixture photos, the inotify watches the kernel lists.
        .target(name: "TestSupport", dependencies: ["Rendering"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "CLinux", "TestSupport", "Locking"]),
        .testTarget(name: "RenderingTests", dependencies: ["Rendering", "ThumbHash", "TestSupport", "Locking"]),
        .testTarget(name: "ThumbHashTests", dependencies: ["ThumbHash"]),
        .testTarget(name: "LibraryTests", dependencies: ["Library", "TestSupport", "Locking"]),
        // The caches and the pipeline; with Library for a cache directory beside an index database.
        .testTarget(name: "ThumbnailsTests", dependencies: ["Library", "Thumbnails", "TestSupport", "Locking", "CLinux"]),
        .testTarget(name: "ThumbServerTests", dependencies: ["ThumbServer", "Library", "TestSupport", "Locking", "Cluster", "Console"]),
        // ThumbdClient against real servers started in the test process (ThumbServer's `Thumbd`).
        .testTarget(name: "ThumbdClientTests", dependencies: ["ThumbdClient", "ThumbHash", "ThumbServer", "TestSupport"]),
    ]
)
