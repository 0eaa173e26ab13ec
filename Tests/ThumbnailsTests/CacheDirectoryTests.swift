import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport
@testable import Thumbnails

/// thumbd deletes only what it can show it wrote: a `cache_dir` pointed at photos or a home
/// directory by mistake is refused, and every file in it stays byte for byte as it was.
@Suite struct CacheDirectoryTests {
    /// Every regular file under `root` with its bytes, by relative path.
    func snapshot(_ root: String) -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walk = FileManager.default.enumerator(atPath: root) else { return files }
        for case let relative as String in walk {
            var st = stat()
            guard lstat(root + "/" + relative, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            files[relative] = FileManager.default.contents(atPath: root + "/" + relative)
        }
        return files
    }

    @Test func aPhotoLibraryGivenAsTheCacheIsRefusedAndKeepsEveryPhoto() throws {
        // The layout a user lost photos with: photos in tmp/ and entries/, where the cache keeps its files.
        let dl = TemporaryDirectory()
        dl.write("tmp/holiday.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        dl.write("entries/00/wedding.jpg", [UInt8](Fixtures.photo("kodak-dc210-1998-vga.jpg")))
        dl.write("entries/family.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        let before = snapshot(dl.path)
        #expect(before.count == 3)
        #expect { _ = try DiskCache(directory: dl.path, limitBytes: 1 << 20) } throws: { error in
            "\(error)".contains(dl.path) && "\(error)".contains("did not create")
        }
        #expect(snapshot(dl.path) == before)
        #expect(!FileManager.default.fileExists(atPath: dl.path + "/" + CacheDirectory.tagName))
    }

    @Test func aHomeDirectoryGivenAsTheCacheIsRefusedAndKeepsEveryFile() throws {
        let home = TemporaryDirectory()
        home.write("tmp/notes.txt", Array("remember the milk\n".utf8))
        home.write("entries/ab/data.bin", [0, 1, 2, 3, 4])
        let before = snapshot(home.path)
        #expect(throws: DiskCache.SetupError.self) { _ = try DiskCache(directory: home.path, limitBytes: 1 << 20) }
        #expect(snapshot(home.path) == before)
    }

    @Test func aDirectoryTaggedByAnotherProgramIsRefused() throws {
        let other = TemporaryDirectory()
        other.write(CacheDirectory.tagName, Array("Signature: 8a477f597d28d172789f06886806bc55\n# cargo\n".utf8))
        other.write("tmp/build.o", [1])
        #expect(throws: DiskCache.SetupError.self) { _ = try DiskCache(directory: other.path, limitBytes: 1 << 20) }
        #expect(FileManager.default.contents(atPath: other.path + "/tmp/build.o") == Data([1]))
    }

    @Test func aNewOrEmptyDirectoryIsTaggedAndThenReusedAcrossRestarts() throws {
        let parent = TemporaryDirectory()
        for path in [parent.path + "/new/cache", parent.path + "/empty"] {
            if path.hasSuffix("empty") { #expect(mkdir(path, 0o755) == 0) }
            let cache = try DiskCache(directory: path, limitBytes: 1 << 20)
            let key = CacheKey(assetPath: "a.jpg", source: SourceIdentity(size: 1, modifiedNanoseconds: 1),
                               spec: GridSpec.defaults[1], format: .automatic, quality: 80)
            #expect(cache.write(Thumbnail(bytes: [1, 2, 3], format: .jpeg, width: 1, height: 1), for: key))
            let tag = try #require(FileManager.default.contents(atPath: path + "/CACHEDIR.TAG"))
            // The Cache Directory Tagging Specification's signature opens the file.
            #expect(String(decoding: tag, as: UTF8.self).hasPrefix("Signature: 8a477f597d28d172789f06886806bc55\n"))
            let reopened = try DiskCache(directory: path, limitBytes: 1 << 20)
            #expect(reopened.read(key)?.bytes == [1, 2, 3])
        }
    }

    @Test func anUntaggedCacheOfAnEarlierThumbdIsAdoptedByItsForm() throws {
        let old = TemporaryDirectory()
        let key = CacheKey(assetPath: "a.jpg", source: SourceIdentity(size: 1, modifiedNanoseconds: 1),
                           spec: GridSpec.defaults[1], format: .automatic, quality: 80)
        do {
            let cache = try DiskCache(directory: old.path, limitBytes: 1 << 20)
            #expect(cache.write(Thumbnail(bytes: [9, 9], format: .png, width: 2, height: 2), for: key))
        }
        #expect(unlink(old.path + "/CACHEDIR.TAG") == 0)   // as an earlier thumbd left it
        old.write("tmp/77-1.tmp", DiskEntry.magic + [0, 0])
        let adopted = try DiskCache(directory: old.path, limitBytes: 1 << 20)
        #expect(adopted.read(key)?.bytes == [9, 9])
        #expect(FileManager.default.fileExists(atPath: old.path + "/CACHEDIR.TAG"))
        #expect(!FileManager.default.fileExists(atPath: old.path + "/tmp/77-1.tmp"))
    }

    @Test func aFileThatIsNotAnEntryBlocksTheAdoptionOfAnUntaggedDirectory() throws {
        let old = TemporaryDirectory()
        // A digest-shaped name holding a photo, not an entry.
        old.write("entries/0f/0f0123456789abcdef0123456789abcd", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        let before = snapshot(old.path)
        #expect(throws: DiskCache.SetupError.self) { _ = try DiskCache(directory: old.path, limitBytes: 1 << 20) }
        #expect(snapshot(old.path) == before)
    }

    @Test func theCacheMustBeApartFromTheLibrary() throws {
        let parent = TemporaryDirectory()
        let library = parent.path + "/photos"
        #expect(mkdir(library, 0o755) == 0)
        let root = CacheDirectory.resolve(library)
        #expect(CacheDirectory.overlap(cache: library, library: root)?.contains("is the library") == true)
        #expect(CacheDirectory.overlap(cache: library + "/", library: root)?.contains("is the library") == true)
        #expect(CacheDirectory.overlap(cache: library + "/.cache", library: root)?.contains("inside") == true)
        #expect(CacheDirectory.overlap(cache: library + "/not/yet/../made", library: root)?.contains("inside") == true)
        #expect(CacheDirectory.overlap(cache: parent.path, library: root)?.contains("contains") == true)
        #expect(CacheDirectory.overlap(cache: parent.path + "/photos-cache", library: root) == nil)
        #expect(CacheDirectory.overlap(cache: parent.path + "/photos/../cache", library: root) == nil)
        // Through a link: the link's target decides.
        #expect(symlink(library, parent.path + "/alias") == 0)
        #expect(CacheDirectory.overlap(cache: parent.path + "/alias/c", library: root)?.contains("inside") == true)
    }

    @Test func aLibraryMountedAtAnotherPathIsStillTheLibrary() throws {
        let parent = TemporaryDirectory()
        let photos = parent.path + "/photos", mounted = parent.path + "/mounted"
        #expect(mkdir(photos, 0o755) == 0 && mkdir(mounted, 0o755) == 0 && mkdir(photos + "/zcache", 0o755) == 0)
        // A bind mount (root only; CI runs as root): where none can be made there is nothing to test.
        guard mount(photos, mounted, nil, UInt(MS_BIND), nil) == 0 else { return }
        defer { umount2(mounted, 0); withExtendedLifetime(parent) {} }   // removed only once unmounted
        let root = CacheDirectory.resolve(mounted)   // the library as given: the mount point
        #expect(CacheDirectory.overlap(cache: photos + "/zcache", library: root)?.contains("inside") == true)
        #expect(CacheDirectory.overlap(cache: photos + "/zcache/new", library: root)?.contains("inside") == true)
        #expect(CacheDirectory.overlap(cache: photos, library: root)?.contains("is the library") == true)
        #expect(CacheDirectory.overlap(cache: parent.path + "/elsewhere", library: root) == nil)
        // The other way round: a mounted parent of the library as the cache.
        let outer = parent.path + "/outer"
        #expect(mkdir(outer, 0o755) == 0)
        guard mount(parent.path, outer, nil, UInt(MS_BIND), nil) == 0 else { return }
        defer { umount2(outer, 0) }
        #expect(CacheDirectory.overlap(cache: outer, library: CacheDirectory.resolve(photos))?.contains("contains") == true)
    }

    @Test func anIndexFileThatIsNotADatabaseIsLeftAlone() throws {
        let cache = TemporaryDirectory()
        let photos = TemporaryDirectory()
        photos.write("a.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        let notADatabase = [UInt8](Fixtures.photo("Landscape_6.jpg"))
        cache.write("index.sqlite", notADatabase)
        let index = try LibraryIndex(library: try Library(root: photos.path), databasePath: cache.path + "/index.sqlite")
        index.rescan()
        #expect(index.listing(order: .newest, offset: 0, limit: 10).items.map(\.path) == ["a.jpg"])   // kept in memory
        #expect(FileManager.default.contents(atPath: cache.path + "/index.sqlite") == Data(notADatabase))
    }

    @Test func aDirectoryHoldingOnlyAnotherProgramsIndexSqliteIsRefused() throws {
        let app = TemporaryDirectory()
        let database = Array("SQLite format 3\0".utf8) + [UInt8](repeating: 7, count: 100)
        app.write("index.sqlite", database)
        #expect { _ = try DiskCache(directory: app.path, limitBytes: 1 << 20) } throws: { "\($0)".contains("index.sqlite") }
        #expect(FileManager.default.contents(atPath: app.path + "/index.sqlite") == Data(database))
        #expect(!FileManager.default.fileExists(atPath: app.path + "/CACHEDIR.TAG"))
    }

    @Test func refusalsNameTheirCause() throws {
        let parent = TemporaryDirectory()
        parent.write("other/CACHEDIR.TAG", Array("Signature: 8a477f597d28d172789f06886806bc55\n".utf8))
        #expect { _ = try DiskCache(directory: parent.path + "/other", limitBytes: 1) } throws: {
            "\($0)".contains("another program")
        }
        #expect(symlink(parent.path + "/nowhere", parent.path + "/dangling") == 0)
        #expect { _ = try DiskCache(directory: parent.path + "/dangling", limitBytes: 1) } throws: {
            "\($0)".contains("symbolic link to something that does not exist")
        }
        #expect(!FileManager.default.fileExists(atPath: parent.path + "/nowhere"))
    }

    @Test func aTildeIsAnOrdinaryName() {
        // No shell expands it in a config file or an environment variable: a directory named `~`.
        let resolved = CacheDirectory.resolve("/tmp/~/thumbs/../cache")
        #expect(resolved == CacheDirectory.resolve("/tmp") + "/~/cache")
        #expect(CacheDirectory.resolve("~").hasSuffix("/~"))
        #expect(CacheDirectory.resolve("/") == "/")
    }

    /// Another program's SQLite database at `index.sqlite` (in a cache thumbd tagged, or through
    /// a link) is neither deleted nor written: not its schema, not its journal mode.
    @Test(arguments: ["assetsOfAnotherShape", "otherTables", "busy", "link"])
    func anotherProgramsDatabaseAtTheIndexPathIsNotTouched(kind: String) throws {
        let cache = TemporaryDirectory(), photos = TemporaryDirectory(), elsewhere = TemporaryDirectory()
        photos.write("a.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        let owned = kind == "link" ? elsewhere.path + "/app.db" : cache.path + "/index.sqlite"
        do {
            let app = try SQLiteDatabase(path: owned)
            try app.execute(kind == "assetsOfAnotherShape"
                ? "CREATE TABLE assets(id INTEGER PRIMARY KEY, url TEXT); INSERT INTO assets(url) VALUES('precious');"
                : "CREATE TABLE notes(id INTEGER PRIMARY KEY, note TEXT); INSERT INTO notes(note) VALUES('precious');")
        }
        if kind == "link" { #expect(symlink(owned, cache.path + "/index.sqlite") == 0) }
        let before = try #require(FileManager.default.contents(atPath: owned))
        let holder = kind == "busy" ? try SQLiteDatabase(path: owned) : nil
        try holder?.execute("BEGIN EXCLUSIVE")
        let index = try LibraryIndex(library: try Library(root: photos.path), databasePath: cache.path + "/index.sqlite")
        #expect(!index.persisted)
        index.rescan()
        #expect(index.listing(order: .newest, offset: 0, limit: 10).total == 1)   // served from memory
        try holder?.execute("COMMIT")
        #expect(FileManager.default.contents(atPath: owned) == before)
        #expect(!FileManager.default.fileExists(atPath: owned + "-wal"))
    }

    @Test func aDamagedIndexOfThumbdsIsRemovedAndRebuilt() throws {
        let cache = TemporaryDirectory(), photos = TemporaryDirectory()
        photos.write("a.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        cache.write("index.sqlite", Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0xEE, count: 4096))
        let index = try LibraryIndex(library: try Library(root: photos.path), databasePath: cache.path + "/index.sqlite")
        #expect(index.persisted)
        index.rescan()
        let reopened = try LibraryIndex(library: try Library(root: photos.path), databasePath: cache.path + "/index.sqlite")
        #expect(reopened.listing(order: .newest, offset: 0, limit: 10).total == 1)   // kept in the rebuilt file
    }
}
