@testable import Console
import Testing

/// Warnings reach the journal at warning priority (`Console.journalPrefix`): `<4>` when stderr is
/// the stream `JOURNAL_STREAM` names (systemd.exec(5)), nothing otherwise (found by an operator:
/// `journalctl -u thumbd -p warning` showed none of thumbd's warnings, all at info).
@Suite struct ConsoleTests {
    @Test(arguments: [
        ("8:1234", UInt64(8), UInt64(1234), "<4>"),       // the journal's stream itself
        ("8:1234", UInt64(8), UInt64(1235), ""),          // stderr redirected since: another inode
        ("9:1234", UInt64(8), UInt64(1234), ""),          // another device
        ("8:1234:5", UInt64(8), UInt64(1234), ""),        // not DEV:INODE
        ("8:", UInt64(8), UInt64(0), ""),
        ("x:1234", UInt64(8), UInt64(1234), ""),
    ] as [(String, UInt64, UInt64, String)])
    func aWarningIsAtWarningPriorityOnlyOnTheJournalsStream(stream: String, device: UInt64, inode: UInt64, prefix: String) {
        #expect(Console.journalPrefix(journalStream: stream, device: device, inode: inode) == prefix)
    }

    @Test func noJournalNoPrefix() {
        #expect(Console.journalPrefix(journalStream: nil, device: 8, inode: 1234) == "")
    }
}
