import HTTP
import Testing

/// RFC 9110 §5.6.1 lists read over bytes: the scanner behind `Connection`, `Accept` and
/// `If-None-Match`.
@Suite struct HTTPFieldListTests {
    private func members(_ value: String, separator: Character = ",") -> [String] {
        var value = value
        value.makeContiguousUTF8()
        return value.utf8.withContiguousStorageIfAvailable { bytes in
            HTTPFieldList.members(bytes, separator: separator.asciiValue!).map { String(decoding: $0, as: UTF8.self) }
        }!
    }

    private func contains(_ value: String, _ token: StaticString) -> Bool {
        var value = value
        value.makeContiguousUTF8()
        return value.utf8.withContiguousStorageIfAvailable { HTTPFieldList.contains($0, token: token) }!
    }

    @Test func membersAreSplitAtTheSeparatorWithoutWhitespace() {
        #expect(members("a, b ,\tc") == ["a", "b", "c"])
        #expect(members("a, ,b") == ["a", "", "b"])   // empty members are kept: they match nothing
        #expect(members("") == [""])
        #expect(members("a,") == ["a", ""])
        #expect(members(" text/html ;q=0.9; level=1", separator: ";") == ["text/html", "q=0.9", "level=1"])
    }

    @Test func aTokenIsFoundInAnyCase() {
        #expect(contains("close", "close"))
        #expect(contains("Keep-Alive, CLOSE", "close"))
        #expect(contains(" upgrade ,\tkeep-alive ", "keep-alive"))
        #expect(!contains("closed", "close"))
        #expect(!contains("clos", "close"))
        #expect(!contains("", "close"))
        #expect(!contains("keep-alive", "close"))
    }
}
