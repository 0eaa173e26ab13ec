import HTTP
import Library
import Rendering
import Synchronization
import Thumbnails
#if canImport(Glibc)
import Glibc
#endif

/// A short-lived memo of request → (cache key, resolved source), so a hit does not repeat the
/// percent-decoding, NFC normalisation, per-segment lookups, `realpath` and key hashing of the
/// first request for the same URL (nginx's `open_file_cache` plays the same part).
///
/// With a `LibraryWatch`, an entry is trusted while the watch's stamp is the one it was last
/// checked under (nothing in the library changed since, as the kernel reports changes); after
/// a change, or while the watch cannot vouch for the tree, the URL is resolved again in full,
/// and a path through a symlink (which may lead through a link outside the library, where
/// nothing is watched) always is. Without a watch, a use `stat`s the requested path, following
/// symlinks, and wants the same file (device and inode) with the same size and mtime: a
/// replaced or deleted source, and a symlink on the way removed or pointed at another file, are
/// noticed at once. Entries expire after `lifetime`, which bounds how long a change the watch
/// cannot see (see `LibraryWatch`), or that one `stat` cannot (a directory on the way swapped for
/// a link to the same file elsewhere), goes unnoticed.
///
/// An expired entry is never used again, so the memo holds only what one `lifetime` may still
/// use: entries are stored in the current generation, the generations turn once a `lifetime` has
/// passed, and the one before the previous is dropped whole (every entry in it has expired).
/// Held entries therefore follow the URLs asked for in the last two lifetimes, not every URL
/// ever asked for: a memo emptied only when full grew for as long as new URLs came (the
/// soak's resident-memory growth, issue 33; docs/performance.md, "Soak").
/// Thread-safe: one `Mutex` for the generations; entries' stamps are atomics.
final class ResolvedKeyCache: Sendable {
    /// One resolved URL. A class, so a hit takes one reference, not a copy of the key's and
    /// asset's strings.
    final class Entry: Sendable {
        let key: CacheKey
        let asset: ResolvedAsset
        let expires: UInt64
        /// The watch's stamp when the source was last found unchanged (`noStamp`: none).
        let checkedStamp: Atomic<UInt64>
        /// The requested path reaches the file through a symlink: a link outside the library
        /// (where nothing is watched) may be on the way, so neither the watch nor one `stat`
        /// can vouch for it, and each use resolves the URL again in full.
        let throughLink: Bool
        /// The `ThumbnailVersion` token of `key`: a request whose `?v=` is this gets the
        /// versioned (long-lived) `Cache-Control`.
        let version: String
        /// The prepared headers of a hit on this key from each hit tier in each format, with
        /// each `Cache-Control` policy, built when the entry is: reading them takes no lock.
        private let hitHeaders: [HTTPHeaders]

        /// `hitHeaders` builds the headers of a 200 from a tier in a format, versioned or not;
        /// each is prepared.
        init(key: CacheKey, asset: ResolvedAsset, expires: UInt64, checkedStamp: UInt64?,
             hitHeaders: (CacheTier, ImageFormat, _ versioned: Bool) -> HTTPHeaders) {
            self.key = key
            self.asset = asset
            self.expires = expires
            self.checkedStamp = Atomic(checkedStamp ?? ResolvedKeyCache.noStamp)
            throughLink = asset.requestedPath != asset.absolutePath
            version = ThumbnailVersion.token(for: key)
            self.hitHeaders = [false, true].flatMap { versioned in
                [CacheTier.memory, .disk].flatMap { tier in
                    [ImageFormat.jpeg, .png, .webp].map { hitHeaders(tier, $0, versioned).prepared() }
                }
            }
        }

        /// Whether `v` (a request's raw `?v=` value; nil: none) is this key's current token.
        func isCurrent(version v: Substring.UTF8View?) -> Bool {
            guard let v else { return false }
            return v.elementsEqual(version.utf8)
        }

        /// The prepared headers of a 200 from `tier` (memory or disk) in `format`, with the
        /// versioned `Cache-Control` or the unversioned one.
        func headers(tier: CacheTier, format: ImageFormat, versioned: Bool) -> HTTPHeaders {
            let column: Int
            switch format {   // the order in `init`
            case .jpeg: column = 0
            case .png: column = 1
            case .webp: column = 2
            }
            return hitHeaders[(versioned ? 6 : 0) + (tier == .memory ? 0 : 3) + column]
        }
    }

    /// What the memo is keyed by: the format choice and the still-encoded path. Lookups use the
    /// request's own `Substring`, so no key string is built per request. Compared and hashed as
    /// bytes: `String` hashing normalises (Unicode canonical equivalence) first, which a byte
    /// memo does not need.
    private struct Memo: Hashable {
        let format: FormatChoice
        let path: Substring

        static func == (a: Memo, b: Memo) -> Bool {
            guard a.format == b.format, a.path.utf8.count == b.path.utf8.count else { return false }
            return a.withBytes { x in b.withBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(format)
            withBytes { hasher.combine(bytes: $0) }
        }

        /// The path's UTF-8 bytes (native strings are contiguous, read in place; others are
        /// copied first).
        private func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
            if let result = path.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
                return result
            }
            var path = path
            path.makeContiguousUTF8()
            return path.utf8.withContiguousStorageIfAvailable { body(UnsafeRawBufferPointer($0)) }!
        }
    }

    /// How long an entry is trusted, ns. `2 s`.
    let lifetime: UInt64 = 2_000_000_000
    /// Entries the current generation holds at most; when it fills, the generations turn early.
    /// `16,384`.
    let capacity = 16_384
    /// No stamp: never equal to one a `LibraryWatch` gives (its generations count in 8s from 0).
    static let noStamp = UInt64.max
    /// Tells when nothing has changed since an entry was checked; nil: every use `stat`s.
    let watch: LibraryWatch?
    /// Monotonic time, ns (`coarseNow` unless a test passes time by hand).
    private let now: @Sendable () -> UInt64

    /// The memo's two generations: lookups see both, stores go to `current`.
    private struct Generations {
        var current: [Memo: Entry] = [:]
        var previous: [Memo: Entry] = [:]
        /// When `current` began, ns.
        var began: UInt64

        /// Turns the generations when `current` is a `lifetime` old or holds `capacity`
        /// entries; returns what it dropped (nothing when it did not turn), for the caller to
        /// release outside the lock.
        mutating func turn(at now: UInt64, lifetime: UInt64, capacity: Int) -> [[Memo: Entry]] {
            let age = now &- began
            guard age >= lifetime || current.count >= capacity else { return [] }
            began = now
            if age >= 2 * lifetime {   // no turn for two lifetimes: `current` has expired too
                defer { current = [:]; previous = [:] }
                return [previous, current]
            }
            defer { previous = current; current = [:] }
            return [previous]
        }
    }
    private let generations: Mutex<Generations>
    /// Checks of a memoised entry, a `stat` or a full resolve (for `/stats` `library.source_checks`).
    private let sourceChecks = Atomic<Int>(0)

    /// `now`: monotonic ns; `coarseNow` unless a test passes time by hand.
    init(watch: LibraryWatch?, now: @escaping @Sendable () -> UInt64 = ResolvedKeyCache.coarseNow) {
        self.watch = watch
        self.now = now
        generations = Mutex(Generations(began: now()))
    }

    /// Entries held now, in both generations (expired ones included until their generation is
    /// dropped).
    var heldEntries: Int { generations.withLock { $0.current.count + $0.previous.count } }

    /// Monotonic time, ns, from `CLOCK_MONOTONIC_COARSE` (clock_gettime(2): the last tick's
    /// time, a few ms behind, read without the TSC): enough for a 2 s lifetime, and a quarter of
    /// the cost of a precise read on every hit.
    static func coarseNow() -> UInt64 {
        UInt64(truncatingIfNeeded: timespec.now(CLOCK_MONOTONIC_COARSE).nanoseconds)
    }

    /// The stamp to give `lookUp` and `store`, taken before anything about the source is read.
    func stamp() -> UInt64? { watch?.stamp() }

    /// How many times an entry was checked (a `stat`, or a full resolve after a change) rather
    /// than trusted on the watch's stamp.
    var sourceCheckCount: Int { sourceChecks.load(ordering: .relaxed) }

    /// What the memo knows of a URL.
    enum Lookup {
        /// Unexpired, and nothing changed since it was checked (or, unwatched, one `stat` shows
        /// the same file): use it.
        case current(Entry)
        /// Unexpired, but the library changed since it was checked: resolve the URL again in
        /// full and `confirm` it when nothing it depends on changed.
        case changed(Entry)
        /// Not memoised, or expired.
        case unknown
    }

    /// Looks up `path` with `format`. With a watch, `stamp` (from `stamp()`, taken before this
    /// call) is the one the entry must have been checked under to be trusted as it is; after a
    /// change anywhere, and while the watch is blind (no stamp), the URL is resolved again in
    /// full, as a first request is: a `stat` would not notice a directory on the way swapped for
    /// a symlink to elsewhere (the same file, now reached from outside the root) or a second
    /// spelling of the name added (NFC beside NFD). A path that goes through a symlink is
    /// resolved again in full on every use. Without a watch, a `stat` of the requested path
    /// (following links) must show the same file (device, inode, size, mtime).
    func lookUp(_ path: Substring, format: FormatChoice, stamp: UInt64?) -> Lookup {
        let now = now()
        let memo = Memo(format: format, path: path)
        // What a turn drops is released after the lock, when `dropped` goes.
        let (found, dropped) = generations.withLock { g in
            let dropped = g.turn(at: now, lifetime: lifetime, capacity: capacity)
            return (g.current[memo] ?? g.previous[memo], dropped)
        }
        withExtendedLifetime(dropped) {}
        guard let entry = found, entry.expires > now else { return .unknown }
        // Through a symlink, the way may lead outside the library, where nothing is watched.
        if entry.throughLink { return .changed(entry) }
        if watch != nil {
            guard let stamp else { return .changed(entry) }   // the watch is blind now
            return entry.checkedStamp.load(ordering: .relaxed) == stamp ? .current(entry) : .changed(entry)
        }
        sourceChecks.wrappingAdd(1, ordering: .relaxed)
        var st = stat()
        guard entry.asset.requestedPath.withCString({ stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG,
              UInt64(st.st_ino) == entry.asset.inode, UInt64(st.st_dev) == entry.asset.device,
              SourceIdentity(st) == entry.asset.identity
        else { return .unknown }
        return .current(entry)
    }

    /// After `.changed(entry)`: the URL resolved again to `key` and `asset`. When they are the
    /// entry's, it is trusted under `stamp` from now on and returned; otherwise nil (store the
    /// new ones).
    func confirm(_ entry: Entry, key: CacheKey, asset: ResolvedAsset, stamp: UInt64?) -> Entry? {
        sourceChecks.wrappingAdd(1, ordering: .relaxed)
        guard key.digest == entry.key.digest, asset == entry.asset else { return nil }
        if let stamp { entry.checkedStamp.store(stamp, ordering: .relaxed) }
        return entry
    }

    /// Memoises `key` and `asset` for `path` with `format`; returns the new entry. `stamp` is
    /// the one taken before `asset` was resolved.
    func store(_ path: Substring, format: FormatChoice, key: CacheKey, asset: ResolvedAsset, stamp: UInt64?,
               hitHeaders: (CacheTier, ImageFormat, _ versioned: Bool) -> HTTPHeaders) -> Entry {
        let now = now()
        let entry = Entry(key: key, asset: asset, expires: now + lifetime,
                          checkedStamp: stamp, hitHeaders: hitHeaders)
        // A copy of the path alone, so the memo does not keep the whole request target alive.
        let memo = Memo(format: format, path: Substring(String(path)))
        let dropped = generations.withLock { g in
            let dropped = g.turn(at: now, lifetime: lifetime, capacity: capacity)
            g.previous[memo] = nil   // one entry per URL
            g.current[memo] = entry
            return dropped
        }
        withExtendedLifetime(dropped) {}   // released after the lock
        return entry
    }
}
