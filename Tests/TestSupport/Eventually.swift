import Foundation

/// Whether `condition` holds within `seconds` (default 10 s), asked every 10 ms: for tests that
/// wait for what a server or pipeline does in the background. The last answer decides.
public func eventually(within seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}
