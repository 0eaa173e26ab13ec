import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// The hand-written `/assets` page (`ThumbService.respondWithListing`) against its `Codable`
/// shape (`ListingBody`): it decodes into it with the values worked out here, and it is the same
/// JSON, field for field, null for null, as `JSONBody.encode` writes of what it decoded to.
@Suite struct ListingBodyTests {
    /// kodak-dc210-1998-vga.jpg (79,837 bytes, 640x480, EXIF 2000-10-26 16:46:51, no offset)
    /// under a name JSON must escape and one that is not ASCII, both modified 2005-06-07T08:09:10Z.
    final class Library {
        let root = NSTemporaryDirectory() + "thumbd-listing-body-\(UUID().uuidString)"
        static let names = ["say \"hi\" \\ now.jpg", "한글.jpg"]

        init() throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            for name in Self.names {
                try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg", toPath: root + "/" + name)
                ListingTests.setModified(root + "/" + name, seconds: 1_118_131_750)
            }
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    @Test func theHandWrittenPageIsTheCodableShape() throws {
        let library = try Library()
        let service = try InProcessServer(library: library.root) { $0.makeNoPlaceholders() }   // the generation is checked
        #expect(eventually { service.thumbd.service.index.isComplete })
        let response = service.respond("GET", "/assets?limit=1")
        #expect(response.status == 200)
        let page = try JSONDecoder().decode(ListingBody.self, from: Data(response.body))
        #expect(page.total == 2 && page.offset == 0 && page.generation == service.thumbd.service.index.generation)
        #expect(page.next != nil)
        let item = try #require(page.items.first)
        // A tie on `taken`: by path, byte order ("s" 0x73 before "한" 0xED).
        #expect(item.path == "say \"hi\" \\ now.jpg")
        #expect(item.url == "say%20%22hi%22%20%5C%20now.jpg")
        #expect(item.bytes == 79_837 && item.type == .photo && item.durationMilliseconds == nil)
        #expect(item.width == 640 && item.height == 480)
        #expect(item.taken == "2000-10-26T16:46:51+00:00" && item.modified == "2005-06-07T08:09:10+00:00")
        #expect(item.thumbhash == nil)
        #expect(item.thumbnails.keys.sorted() == ["1", "3", "5"])
        for (grid, url) in item.thumbnails {
            let prefix = "/thumbnails/\(grid)/say%20%22hi%22%20%5C%20now.jpg?v="
            #expect(url.hasPrefix(prefix) && url.dropFirst(prefix.count).allSatisfy { $0.isHexDigit && !$0.isUppercase }
                    && url.count == prefix.count + 16, "\(url)")
        }
        let rest = try JSONDecoder().decode(ListingBody.self, from: Data(service.respond("GET", "/assets?after=\(page.next!)").body))
        #expect(rest.offset == 1 && rest.next == nil && rest.items.map(\.url) == ["%ED%95%9C%EA%B8%80.jpg"])
        #expect(rest.items.map(\.path) == ["한글.jpg"])
        // The same JSON as JSONEncoder writes of the decoded page: no field more or less, nulls alike.
        for body in [response.body, service.respond("GET", "/assets").body] {
            let decoded = try JSONDecoder().decode(ListingBody.self, from: Data(body))
            let handWritten = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? NSDictionary)
            let encoded = try #require(try JSONSerialization.jsonObject(with: Data(JSONBody.encode(decoded))) as? NSDictionary)
            #expect(handWritten == encoded)
        }
    }

    @Test func aPageWithoutANullFieldIsRefused() throws {
        let item = #"{"path":"a.jpg","url":"a.jpg","bytes":1,"type":"photo","duration_ms":null,"width":1,"height":1,"#
            + #""taken":"2000-01-01T00:00:00+00:00","modified":"2000-01-01T00:00:00+00:00","thumbhash":null,"thumbnails":{}}"#
        let page = #"{"total":1,"offset":0,"generation":7,"next":null,"items":[\#(item)]}"#
        #expect(try JSONDecoder().decode(ListingBody.self, from: Data(page.utf8)).items.count == 1)
        for missing in [#""next":null,"#, #""duration_ms":null,"#, #","thumbhash":null"#] {
            let broken = page.replacingOccurrences(of: missing, with: "")
            #expect((try? JSONDecoder().decode(ListingBody.self, from: Data(broken.utf8))) == nil, "\(broken)")
        }
        let video = page.replacingOccurrences(of: #""type":"photo","duration_ms":null"#, with: #""type":"video","duration_ms":1500"#)
        #expect(try JSONDecoder().decode(ListingBody.self, from: Data(video.utf8)).items[0].durationMilliseconds == 1500)
    }
}
