import Dispatch
import Synchronization
import Thumbnails
#if canImport(Glibc)
import Glibc
#endif

/// A short-lived memo of request → (cache key, resolved source), so a hit does not repeat the
/// percent-decoding, NFC normalisation, per-segment lookups, `realpath` and key hashing of the
/// first request for the same URL (nginx's `open_file_cache` plays the same part).
///
/// Every use still `stat`s the resolved file: a replaced source (new size or mtime) or a deleted
/// one is noticed at once. Entries expire after `lifetime`, so a path that comes to resolve
/// elsewhere (a symlink pointed at another file) is re-resolved within that time.
/// Thread-safe: one `Mutex`.
final class ResolvedKeyCache: Sendable {
    /// A class, so a hit takes one reference, not a copy of the key's and asset's strings.
    final class Entry: Sendable {
        let key: CacheKey
        let asset: ResolvedAsset
        let expires: UInt64

        init(key: CacheKey, asset: ResolvedAsset, expires: UInt64) {
            self.key = key
            self.asset = asset
            self.expires = expires
        }
    }

    /// How long an entry is trusted, ns. `2 s`.
    let lifetime: UInt64 = 2_000_000_000
    /// Entries kept at most; the memo is emptied when it fills. `16,384`.
    let capacity = 16_384
    private let entries = Mutex<[String: Entry]>([:])

    /// The memoised key for `memo`, if present, unexpired and the source is unchanged on disk.
    func lookUp(_ memo: String) -> (CacheKey, ResolvedAsset)? {
        let now = DispatchTime.now().uptimeNanoseconds
        guard let entry = entries.withLock({ $0[memo] }), entry.expires > now else { return nil }
        var st = stat()
        guard stat(entry.asset.absolutePath, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
              Int(st.st_size) == entry.asset.identity.size,
              Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec) == entry.asset.identity.modifiedNanoseconds
        else { return nil }
        return (entry.key, entry.asset)
    }

    func store(_ memo: String, key: CacheKey, asset: ResolvedAsset) {
        let entry = Entry(key: key, asset: asset, expires: DispatchTime.now().uptimeNanoseconds + lifetime)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[memo] = entry
        }
    }
}
