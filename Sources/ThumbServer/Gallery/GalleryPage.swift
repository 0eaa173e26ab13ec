/// `GET /`: the reference client of a phone's photo grid, in one page with no external
/// resources. A virtual grid of the whole library (only the rows in and near the viewport are
/// elements; a spacer gives the scroll height), paged through `/assets`, showing the versioned
/// thumbnail URLs the listing gives; the preheat pattern of Apple's `PHCachingImageManager`
/// sample through range `POST /prefetch`; thumbnails that scroll away before loading cancelled;
/// and a live panel of `/stats`.
///
/// The page is the files beside this one, written as a browser reads them: `gallery.html` links
/// `gallery.css` and loads `gallery-placeholder.js` (each item's thumbhash painted under its
/// thumbnail), `gallery-grid.js` (grid, loading), `gallery-preheat.js` (range prefetch ahead of
/// the view), `gallery-library.js` (the listing walked for counts and followed while the page is
/// open), `gallery-viewer.js` (a tapped photo shown large) and `gallery-stats.js` (the panel and
/// its chart), in that order. They are embedded
/// in the binary at build (Package.swift, `.embedInCode`: SwiftPM's `PackageResources`), so
/// nothing is read from disk at run time, and the page served has them inlined (`inlined`).
enum GalleryPage {
    /// The gallery's files as embedded at build, by the name `gallery.html` gives them (each is
    /// listed in Package.swift's `resources` too; `GalleryFilesTests` checks both against the
    /// directory).
    static let files: [String: [UInt8]] = [
        "gallery.html": PackageResources.gallery_html,
        "gallery.css": PackageResources.gallery_css,
        "gallery-placeholder.js": PackageResources.gallery_placeholder_js,
        "gallery-grid.js": PackageResources.gallery_grid_js,
        "gallery-preheat.js": PackageResources.gallery_preheat_js,
        "gallery-library.js": PackageResources.gallery_library_js,
        "gallery-viewer.js": PackageResources.gallery_viewer_js,
        "gallery-stats.js": PackageResources.gallery_stats_js,
    ]

    /// The page served at `/`, UTF-8: `gallery.html` with its stylesheet and scripts inlined.
    /// Assembled once, at start (`ThumbService.init` reads it). The files are fixed at build, so
    /// a failure is a broken build, which `GalleryFilesTests` names; the server still runs and
    /// answers `/` with a 500 saying why (`ThumbService.galleryResponse`).
    static let html: Result<[UInt8], AssemblyError> = {
        let texts = files.mapValues { String(decoding: $0, as: UTF8.self) }
        return Result { () throws(AssemblyError) in Array(try inlined(texts["gallery.html"] ?? "", files: texts).utf8) }
    }()

    /// Why a page's files do not make one page.
    enum AssemblyError: Error, Equatable {
        /// The page refers to a file that is not among the files.
        case missing(String)
        /// The file holds `</style` or `</script` (any case), which would end its inline element
        /// early (HTML's parsing of raw text elements).
        case closesItsElement(String)
        /// The file does not end with a newline (its inline element would start mid-line).
        case noFinalNewline(String)
        /// A stylesheet link or an external script that is not alone on its line as
        /// `<link rel="stylesheet" href="NAME">` or `<script src="NAME"></script>`.
        case unrecognized(line: String)
    }

    /// `page` with each line `<link rel="stylesheet" href="NAME">` replaced by a `<style>` holding
    /// NAME's text, and each run of lines `<script src="NAME"></script>` by one `<script>` holding
    /// their texts in order: one script, as the gallery's files share their top-level names and
    /// run in one go, as they did when they were one script. `files` are texts by name.
    static func inlined(_ page: String, files: [String: String]) throws(AssemblyError) -> String {
        func text(of name: String, inside element: String) throws(AssemblyError) -> String {
            guard let text = files[name] else { throw .missing(name) }
            guard text.hasSuffix("\n") else { throw .noFinalNewline(name) }
            guard !text.lowercased().contains("</" + element) else { throw .closesItsElement(name) }
            return text
        }
        var lines: [String] = []
        var script: String?   // the texts of the current run of `<script src>` lines
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if let name = reference(in: line, between: #"<script src=""#, and: #""></script>"#) {
                script = (script ?? "") + (try text(of: name, inside: "script"))
                continue
            }
            if let texts = script {
                lines.append("<script>\n" + texts + "</script>")
                script = nil
            }
            if let name = reference(in: line, between: #"<link rel="stylesheet" href=""#, and: #"">"#) {
                lines.append("<style>\n" + (try text(of: name, inside: "style")) + "</style>")
            } else if line.contains("<script src") || line.contains(#"rel="stylesheet""#) {
                throw .unrecognized(line: String(line))
            } else {
                lines.append(String(line))
            }
        }
        if let texts = script { lines.append("<script>\n" + texts + "</script>") }
        return lines.joined(separator: "\n")
    }

    /// The file name a line `prefix NAME suffix` refers to, or nil.
    private static func reference(in line: Substring, between prefix: String, and suffix: String) -> String? {
        guard line.hasPrefix(prefix), line.hasSuffix(suffix), line.count > prefix.count + suffix.count else { return nil }
        return String(line.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
