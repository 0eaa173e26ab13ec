import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport

@Suite struct LibraryTests {
    let dir = TemporaryDirectory("thumbd-library")
    let outside = TemporaryDirectory("thumbd-outside")

    init() {
        dir.write("2024/a.jpg", [1, 2, 3])
        dir.write(".hidden.jpg", [1])
        dir.write("2024/" + "부산 바다.jpg".decomposedStringWithCanonicalMapping, [4, 5])
        dir.write("서울 야경.jpg".precomposedStringWithCanonicalMapping, [6])
        outside.write("secret.jpg", [9])
        symlink(outside.path + "/secret.jpg", dir.path + "/escape.jpg")
        symlink(dir.path + "/2024/a.jpg", dir.path + "/alias.jpg")
        mkfifo(dir.path + "/pipe.jpg", 0o644)
    }

    @Test func resolvesANestedFileWithItsIdentity() throws {
        let library = try Library(root: dir.path)
        let asset = try library.resolve(["2024", "a.jpg"])
        #expect(asset.assetPath == "2024/a.jpg")
        #expect(asset.identity.size == 3)
        #expect(asset.absolutePath.description.hasSuffix("/2024/a.jpg"))
        #expect(asset.identity.modifiedNanoseconds > 1_600_000_000_000_000_000)
    }

    @Test func nfcFindsNfdOnDiskAndTheOtherWayRound() throws {
        let library = try Library(root: dir.path)
        let viaNFC = try library.resolve(["2024", "부산 바다.jpg".precomposedStringWithCanonicalMapping])
        let viaNFD = try library.resolve(["2024", "부산 바다.jpg".decomposedStringWithCanonicalMapping])
        #expect(viaNFC.identity.size == 2)
        #expect(viaNFC.assetPath == viaNFD.assetPath)   // byte for byte: one file, one cache entry
        #expect(viaNFC.assetPath == DiskPath("2024/" + "부산 바다.jpg".decomposedStringWithCanonicalMapping))
        let other = try library.resolve(["서울 야경.jpg".decomposedStringWithCanonicalMapping])
        #expect(other.identity.size == 1)
    }

    @Test func aSymlinkLeadingOutsideIsRefused() throws {
        let library = try Library(root: dir.path)
        #expect(throws: LibraryError.outsideRoot) { try library.resolve(["escape.jpg"]) }
    }

    @Test(arguments: [["..", "etc", "passwd"], ["2024", "..", "..", "x"], [".hidden.jpg"],
                      ["2024"], ["nope.jpg"], ["2024", ""], ["a/b"], []])
    func refusesWhatIsNotAServableFileInside(segments: [String]) throws {
        let library = try Library(root: dir.path)
        #expect(throws: LibraryError.notFound) { try library.resolve(segments) }
    }

    @Test func symlinksInsideTheRootAreFollowed() throws {
        let library = try Library(root: dir.path)
        #expect(try library.resolve(["alias.jpg"]).identity.size == 3)
    }

    /// The resolved path is judged: a link (of an ordinary name) to a dot-file, or into a
    /// dot-directory, inside the root leads to nothing servable; a link through a dot-named
    /// step that resolves to an ordinary file still does.
    @Test func aSymlinkToADotFileIsNotFollowed() throws {
        dir.write(".trash/old.jpg", [1, 2])
        symlink(".hidden.jpg", dir.path + "/peek.jpg")
        symlink(".trash/old.jpg", dir.path + "/restore.jpg")
        symlink(".trash", dir.path + "/trash")
        symlink(".trash/../2024/a.jpg", dir.path + "/roundabout.jpg")
        let library = try Library(root: dir.path)
        for segments in [["peek.jpg"], ["restore.jpg"], ["trash", "old.jpg"]] {
            #expect(throws: LibraryError.notFound, "\(segments)") { try library.resolve(segments) }
        }
        guard case .hidden = library.target(of: DiskPath(dir.path + "/trash")) else {
            Issue.record("a link to a dot-directory must be .hidden")
            return
        }
        #expect(try library.resolve(["roundabout.jpg"]).identity.size == 3)
        #expect(try library.resolve(["alias.jpg"]).identity.size == 3)
    }

    @Test func aFifoIsRefusedWithoutOpeningIt() throws {
        let library = try Library(root: dir.path)
        #expect(throws: LibraryError.notRegularFile) { try library.resolve(["pipe.jpg"]) }
    }

    @Test func aMissingRootIsRefused() {
        #expect(throws: LibraryError.notFound) { try Library(root: dir.path + "/missing") }
    }

    /// An ASCII name is looked up with one `lstat` (no listing of the directory for a missing
    /// one), except `;` and `` ` ``, which other characters decompose to: U+037E GREEK QUESTION
    /// MARK on disk is still found by a request for `;`.
    @Test func asciiNamesAreFoundWithoutAListingButForTheTwoThatHaveOtherSpellings() throws {
        dir.write("q\u{037E}.jpg", [7])
        let library = try Library(root: dir.path)
        #expect(try library.resolve(["q;.jpg"]).identity.size == 1)
        #expect(throws: LibraryError.notFound) { try library.resolve(["2024", "missing.jpg"]) }
    }

    /// Both spellings on disk (`café.jpg` NFC with 3 bytes, NFD with 5): each request reaches the
    /// file spelled exactly as asked.
    @Test func theExactSpellingWinsOverAnotherForm() throws {
        let nfc = "café.jpg".precomposedStringWithCanonicalMapping, nfd = "café.jpg".decomposedStringWithCanonicalMapping
        dir.write(nfc, [1, 2, 3])
        dir.write(nfd, [1, 2, 3, 4, 5])
        let library = try Library(root: dir.path)
        let viaNFC = try library.resolve([nfc]), viaNFD = try library.resolve([nfd])
        #expect(viaNFC.identity.size == 3 && viaNFC.assetPath == DiskPath(nfc))
        #expect(viaNFD.identity.size == 5 && viaNFD.assetPath == DiskPath(nfd))
        #expect(viaNFC.assetPath != viaNFD.assetPath)
    }

    /// A name that is not UTF-8 (`caf\xE9.jpg`, Latin-1) is found by its bytes, never by a
    /// UTF-8 spelling, and comes back as the disk's bytes.
    @Test func aNameThatIsNotUTF8IsFoundByItsBytes() throws {
        let name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".jpg".utf8)
        let fd = DiskPath(dir.path).appending(name).withCString { open($0, O_CREAT | O_WRONLY, 0o644) }
        #expect(fd >= 0)
        #expect(write(fd, [1, 2, 3, 4], 4) == 4)
        close(fd)
        let library = try Library(root: dir.path)
        let asset = try library.resolve(names: [name])
        #expect(asset.identity.size == 4)
        #expect(asset.assetPath == DiskPath(bytes: name))
        #expect(asset.absolutePath.bytes.elementsEqual(DiskPath(library.root).appending(name).bytes))
        #expect(throws: LibraryError.notFound) { try library.resolve(["café.jpg"]) }
        #expect(throws: LibraryError.notFound) { try library.resolve(names: [Array("caf".utf8) + [0xE8] + Array(".jpg".utf8)]) }
    }
}
