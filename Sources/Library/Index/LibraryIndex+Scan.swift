import Console
import Dispatch
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One scan: the walk of the tree (or of some paths), the header reads of what is new or
/// changed, and what could not be read.
extension LibraryIndex {
    /// One scan: of the whole tree, or (`scopes`, none inside another) of those paths only.
    func scanNow(scopes: Set<DiskPath>? = nil) -> ScanSummary {
        var onDisk: [DiskPath: ScannedFile] = [:]
        var unlisted: [(relative: DiskPath, error: Int32)] = []
        let ancestors = DirectoryIdentity(of: library.rootPath).map { [$0] } ?? []
        let scopes = scopes.flatMap { $0.contains(DiskPath(bytes: [])) ? nil : $0 }
        var links: [DiskPath: DiskPath] = [:]
        if let scopes {
            for scope in scopes {
                collect(scope, rootAncestors: ancestors, into: &onDisk, unlisted: &unlisted, links: &links)
            }
        } else {
            walk(library.rootPath, relative: [], real: [], ancestors: ancestors, into: &onDisk, unlisted: &unlisted, links: &links)
        }
        state.withLock { s in
            if scopes == nil { s.linkedDirectories = links } else { s.linkedDirectories.merge(links) { $1 } }
        }
        let scopeBytes = Set((scopes ?? []).map { ByteKey($0.bytes) })
        let inScope: (DiskPath) -> Bool = { path in
            scopes == nil || scopeBytes.contains(ByteKey(path.bytes)) || Self.hasAncestor(path, in: scopeBytes)
        }
        // Where each file found through a symlink really is, replacing what was known within the
        // scan's reach (but under a directory that could not be listed now, whose records stay).
        let realPaths = onDisk.compactMapValues(\.realPath)
        // Where the files reached through symlinks really were before this scan: what a removed
        // one's scope is judged by in the history (`ListingHistory`).
        let earlierRealPaths = state.withLock { s -> [DiskPath: DiskPath]? in
            let earlier = s.knowsRealPaths ? s.realPaths : nil
            s.realPaths = s.realPaths.filter { path, _ in
                !inScope(path) || unlisted.contains { $0.relative.bytes.isEmpty || path.isInside($0.relative) }
            }.merging(realPaths) { $1 }
            if scopes == nil { s.knowsRealPaths = true }
            return earlier
        }
        let (records, nonImages, redecide, undecodableBefore) = state.withLock { s in
            let (records, nonImages) = scopes.map(s.entries(at:)) ?? (s.records, s.nonImages)
            return (records, nonImages, s.decidedUnderOtherFormats, s.undecodable)
        }
        var summary = ScanSummary()
        summary.unreadableDirectories = unlisted.count
        var upserts: [(DiskPath, SourceIdentity, AssetRecord?)] = []
        var unreadable: [(path: DiskPath, why: String)] = []
        // In a format the listing takes, its header refused by the decoder; and those of them
        // that were listed or decided before, which leave the index.
        var undecodable: [(path: DiskPath, identity: SourceIdentity, why: String)] = []
        var forgotten: Set<DiskPath> = []
        var readable: [DiskPath] = []
        var toRead: [(path: DiskPath, identity: SourceIdentity, absolute: DiskPath, known: SourceIdentity?)] = []   // new or changed
        for (path, file) in onDisk {
            let known = records[path].map { SourceIdentity(size: $0.bytes, modifiedNanoseconds: $0.modifiedNanoseconds) }
                ?? nonImages[path]
            if (known ?? undecodableBefore[path]) == file.identity && !redecide.contains(path) { continue }
            toRead.append((path, file.identity, file.absolute, known))
        }
        let headers = readHeaders(toRead.map(\.absolute))
        for ((path, identity, _, known), header) in zip(toRead, headers) {
            summary.headerReads += 1
            let record: AssetRecord?
            switch header {
            case .success(let info):
                let taken = CaptureDate.taken(header: info, modifiedNanoseconds: identity.modifiedNanoseconds)
                record = AssetRecord(path: path, bytes: identity.size, modifiedNanoseconds: identity.modifiedNanoseconds,
                                     width: info.displayWidth, height: info.displayHeight, taken: taken,
                                     durationMilliseconds: info.durationMilliseconds)
                readable.append(path)
            case .failure(let error) where error.kind == .unsupportedSource && error.isUndecodable:
                // Read, in a format the listing takes, and its header does not decode: not
                // listed (what was listed of it goes), not kept as a non-image in the database,
                // counted and said (`undecodableFiles`).
                readable.append(path)
                undecodable.append((path, identity, error.message))
                if records[path] != nil || nonImages[path] != nil { forgotten.insert(path) }
                continue
            case .failure(let error) where error.kind == .unsupportedSource:
                record = nil   // read, and not an image: remembered until the file changes
                readable.append(path)
            case .failure(let error):
                // Not read (permissions, I/O, descriptors, gone meanwhile): nothing is decided
                // about it; what is listed stays, and the next scan tries again.
                if error.kind != .sourceNotFound {
                    summary.unreadableFiles += 1
                    unreadable.append((path, error.message))
                }
                continue
            }
            if known == nil, record != nil { summary.added += 1 } else if record != nil || records[path] != nil { summary.changed += 1 }
            upserts.append((path, identity, record))
        }
        // What lies under a directory that could not be listed now is not known to be gone.
        let underUnlisted: (DiskPath) -> Bool = { path in
            unlisted.contains { $0.relative.bytes.isEmpty || path.isInside($0.relative) }
        }
        let removed = Set(records.keys).union(nonImages.keys).subtracting(onDisk.keys).filter { !underUnlisted($0) }
            .union(forgotten)
        summary.removed = removed.filter { records[$0] != nil }.count
        report(unreadable.map { ($0.path, $0.why) } + unlisted.map { ($0.relative, "cannot be listed: " + String(cString: strerror($0.error))) },
               readable: readable, files: unreadable.map(\.path), directories: unlisted.map(\.relative), inScope: inScope)
        // Within the scan's reach, the undecodable files are those it found, and those known
        // before that it did not read again (unchanged, or under a directory it could not list).
        let reread = Set(toRead.map(\.path))
        let fresh = state.withLock { s -> [(path: DiskPath, identity: SourceIdentity, why: String)] in
            s.undecodable = s.undecodable.filter { path, identity in
                !inScope(path) || (!reread.contains(path) && (onDisk[path]?.identity == identity || underUnlisted(path)))
            }
            return undecodable.filter { file in
                defer { s.undecodable[file.path] = file.identity }
                return undecodableBefore[file.path] == nil
            }
        }
        for file in fresh {
            Console.warn("library: '\(file.path)' is in a format thumbd reads but cannot be decoded here (\(file.why)); it is not "
                + "listed (library.undecodable_files counts such files) and is read again when it changes")
        }
        // Once every file decided under another list was read again (or is gone), the database
        // says it holds the current list's decisions.
        let formatsSettled = !redecide.isEmpty && redecide.subtracting(readable).subtracting(removed).isEmpty
        if !redecide.isEmpty {
            state.withLock { $0.decidedUnderOtherFormats.subtract(Set(readable).union(removed)) }
        }
        guard !upserts.isEmpty || !removed.isEmpty || formatsSettled else { return summary }
        persist(upserts: upserts, removed: removed, formatsSettled: formatsSettled)
        // The generation it moved to (nil: it did not move), and the images listed anew.
        let (moved, listedAnew) = state.withLock { s -> (Int?, [AssetRecord]) in
            var replaced: [AssetRecord] = [], fresh: [AssetRecord] = []
            for (path, identity, record) in upserts {
                let old = s.records[path]
                if old != record { old.map { replaced.append($0) }; record.map { fresh.append($0) } }
                s.set(path, record: record, nonImage: record == nil ? identity : nil)
            }
            for path in removed {
                s.records[path].map { replaced.append($0) }
                s.set(path, record: nil, nonImage: nil)
            }
            s.headerReads += summary.headerReads
            Self.reorder(&s, removing: replaced, inserting: fresh)
            s.dropPublishedPlaceholders(of: replaced.map(\.path))
            guard !replaced.isEmpty || !fresh.isEmpty else { return (nil, fresh) }
            s.generation += 1
            s.recordsGeneration = s.generation
            s.history.append(ListingChange(
                generation: s.generation,
                removed: replaced.map { record in (record, earlierRealPaths.map { $0[record.path] ?? record.path }) },
                inserted: fresh.map(\.path)))
            return (s.generation, fresh)
        }
        if let moved { for observer in generationObservers.withLock({ $0 }) { observer(moved) } }
        if !listedAnew.isEmpty, let handler = freshImagesHandler.withLock({ $0 }) { handler(listedAnew) }
        return summary
    }

    /// The headers of `files` (absolute paths), in their order: read by up to
    /// `headerReaders` threads at once when there are many (a first scan, a `cp -r`), one by
    /// one when few. Each read is independent (libvips is thread-safe; the probe is @Sendable).
    func readHeaders(_ files: [DiskPath]) -> [Result<SourceInfo, RenderError>] {
        let threads = min(headerReaders, files.count / 16)
        guard threads > 1 else { return files.map(probe) }
        let results = Mutex([Result<SourceInfo, RenderError>?](repeating: nil, count: files.count))
        let next = Atomic(0)
        let probe = probe
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            var mine: [(Int, Result<SourceInfo, RenderError>)] = []
            while true {
                let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard i < files.count else { break }
                mine.append((i, probe(files[i])))
            }
            results.withLock { all in for (i, result) in mine { all[i] = result } }
        }
        return results.withLock { $0.map { $0! } }
    }

    /// Records what the scan could not read (`files`, `directories`), and says each new one once
    /// on stderr (paths relative to the root); forgets those read this time. What was unreadable
    /// within the scan's reach (`inScope`: all of it for a whole rescan, the paths an update
    /// looked at) is replaced by what this scan found; the rest stands.
    func report(_ failures: [(path: DiskPath, why: String)], readable: [DiskPath],
                        files: [DiskPath], directories: [DiskPath], inScope: (DiskPath) -> Bool) {
        let fresh = state.withLock { s -> [(path: DiskPath, why: String)] in
            s.unreadableFiles = s.unreadableFiles.filter { !inScope($0) }.union(files)
            s.unreadableDirectories = s.unreadableDirectories.filter { !inScope($0) }.union(directories)
            for path in readable { s.reported.remove(path) }
            return failures.filter { s.reported.insert($0.path).inserted }
        }
        for failure in fresh {
            let name = failure.path.bytes.isEmpty ? "the library root" : "'\(failure.path)'"
            Console.warn("library: \(name) could not be read (\(failure.why)); "
                + "it is tried again at each scan, and what was listed stays listed")
        }
    }

    /// A file a walk found: its identity, its absolute path as reached (through links, for the
    /// header read) and, when a symlink on the way made it differ, its real path relative to the
    /// root (`State.realPaths`).
    struct ScannedFile {
        var identity: SourceIdentity
        var absolute: DiskPath
        var realPath: DiskPath?
    }

    /// Collects what `Library` serves, each under its name as on disk, byte for byte (not
    /// normalised, perhaps not UTF-8): regular files, skipping dot-files (`Library.isServableName`),
    /// and what a symlink leads to by `Library.target(of:)`, a file or a directory inside the
    /// root, as a URL through the link reaches it. A directory that is already on the way down
    /// (`ancestors`: device and inode; a link to `.` or `..`) is not walked again, so a loop of
    /// links ends. A directory that is there but cannot be listed (any failure but ENOENT or
    /// ENOTDIR: it went meanwhile) goes to `unlisted`, with its path relative to the root.
    /// `real`: `directory`'s real path relative to the root (links followed), so that each file
    /// found is known by where it really is as well.
    func walk(_ directory: DiskPath, relative: [UInt8], real: [UInt8], ancestors: [DirectoryIdentity],
                      into files: inout [DiskPath: ScannedFile],
                      unlisted: inout [(relative: DiskPath, error: Int32)],
                      links: inout [DiskPath: DiskPath]) {
        guard let dir = openDirectory(directory) else {
            if errno != ENOENT && errno != ENOTDIR { unlisted.append((DiskPath(bytes: relative), errno)) }
            return
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = Library.direntName(entry)
            guard Library.isServableName(name) else { continue }
            let absolute = directory.appending(name)
            let path = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
            guard let (st, target) = status(of: absolute, at: path, links: &links) else { continue }
            let realPath = target ?? (real.isEmpty ? name : real + [UInt8(ascii: "/")] + name)
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                let identity = DirectoryIdentity(st)
                guard !ancestors.contains(identity) else { continue }
                walk(absolute, relative: path, real: realPath, ancestors: ancestors + [identity],
                     into: &files, unlisted: &unlisted, links: &links)
            case S_IFREG:
                files[DiskPath(bytes: path)] = ScannedFile(identity: SourceIdentity(st), absolute: absolute,
                                                           realPath: realPath == path ? nil : DiskPath(bytes: realPath))
            default:
                continue
            }
        }
    }

    /// Collects what lies at `scope` (relative to the root) as `walk` would from the root: the
    /// file, or the directory's subtree, reached through the same symlink rules; nothing when a
    /// name on the way is a dot-file, or the way is gone or leaves the root.
    func collect(_ scope: DiskPath, rootAncestors: [DirectoryIdentity],
                         into files: inout [DiskPath: ScannedFile],
                         unlisted: inout [(relative: DiskPath, error: Int32)],
                         links: inout [DiskPath: DiskPath]) {
        let names = scope.segments.map { Array($0) }
        guard !names.isEmpty, names.allSatisfy(Library.isServableName) else { return }
        var ancestors = rootAncestors
        var absolute = library.rootPath
        var relative: [UInt8] = []
        var real: [UInt8] = []
        for (i, name) in names.enumerated() {
            absolute = absolute.appending(name)
            relative += (relative.isEmpty ? [] : [UInt8(ascii: "/")]) + name
            guard let (st, target) = status(of: absolute, at: relative, links: &links) else { return }
            real = target ?? (real.isEmpty ? name : real + [UInt8(ascii: "/")] + name)
            let last = i == names.count - 1
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                let identity = DirectoryIdentity(st)
                guard !ancestors.contains(identity) else { return }
                ancestors.append(identity)
                if last {
                    walk(absolute, relative: relative, real: real, ancestors: ancestors, into: &files, unlisted: &unlisted, links: &links)
                }
            case S_IFREG where last:
                files[DiskPath(bytes: relative)] = ScannedFile(identity: SourceIdentity(st), absolute: absolute,
                                                               realPath: real == relative ? nil : DiskPath(bytes: real))
            default:
                return
            }
        }
    }

    /// What the walks see at `absolute` (`relative` to the root): its `lstat`, or through a
    /// symlink what `Library.target(of:)` finds inside the root, a file or a directory, with its
    /// real path relative to the root (`target`; the link to a directory noted in `links`); nil
    /// when nothing is there or it is not to be listed (outside, a dot-file, a FIFO...).
    func status(of absolute: DiskPath, at relative: [UInt8],
                links: inout [DiskPath: DiskPath]) -> (stat: stat, target: [UInt8]?)? {
        var st = stat()
        guard absolute.withCString({ lstat($0, &st) }) == 0 else { return nil }
        guard (st.st_mode & S_IFMT) == S_IFLNK else { return (st, nil) }
        switch library.target(of: absolute) {
        case .file(let real, let target):
            return (target, Array(real.bytes.dropFirst(library.rootPath.bytes.count + 1)))
        case .directory(let real, let target):
            let inside = Array(real.bytes.dropFirst(library.rootPath.bytes.count + 1))
            links[DiskPath(bytes: relative)] = DiskPath(bytes: inside)
            return (target, inside)
        case .other, .outside, .missing, .hidden: return nil
        }
    }
}
