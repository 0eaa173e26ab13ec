import Library
import Rendering

/// A keyset cursor of `/assets` and range prefetches (docs/API.md, "Listing"): the sort it
/// belongs to and the key of the item it follows. Opaque to clients; written as URL-safe
/// base64 without padding (RFC 4648 §5) of, in order: a format version byte (1), the sort
/// (0 newest, 1 oldest), `taken` in ms since the epoch (8 bytes, big-endian, two's
/// complement), the asset path's bytes, and an 8-byte FNV-1a check of all before it. The
/// check is no secret (a cursor holds nothing the listing does not show): it tells a cursor
/// of ours from garbage, a truncated copy or an edited one. A later format takes another
/// version byte, so a server refuses the cursors it cannot read, cleanly.
struct ListingCursor: Equatable {
    /// The format this server writes and reads.
    static let version: UInt8 = 1
    /// Longest token read, characters: a path of `PATH_MAX` (4,096) bytes and the rest fit.
    static let maxTokenLength = 6_000

    let order: ListingOrder
    let key: ListingKey

    /// The token.
    var token: String {
        var bytes: [UInt8] = [Self.version, order == .newest ? 0 : 1]
        let taken = UInt64(bitPattern: key.takenMilliseconds)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: taken >> UInt64(shift))) }
        bytes += key.path.bytes
        let check = Self.check(bytes)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: check >> UInt64(shift))) }
        return Base64URL.encode(bytes)
    }

    init(order: ListingOrder, key: ListingKey) {
        self.order = order
        self.key = key
    }

    /// Reads `token` as a cursor of a listing in `order`.
    /// - Throws: `APIError.badCursor` for a token that is not one of ours (not base64url, of
    ///   another version, too short or long, failing its check, a path with NUL or none) or
    ///   one of another sort.
    init(token: some StringProtocol, order: ListingOrder) throws(APIError) {
        guard token.utf8.count <= Self.maxTokenLength, let bytes = Base64URL.decode(token), let version = bytes.first else {
            throw APIError.badCursor("the cursor is not one this server gave")
        }
        guard version == Self.version else {
            throw APIError.badCursor("the cursor is of format \(version), which this server does not read; start again from the first page")
        }
        let payload = bytes.dropLast(8)
        guard bytes.count > 18, Self.check(payload) == bytes.suffix(8).reduce(0, { $0 << 8 | UInt64($1) }),
              payload[1] <= 1 else {
            throw APIError.badCursor("the cursor is not one this server gave")
        }
        let cursorOrder: ListingOrder = payload[1] == 0 ? .newest : .oldest
        guard cursorOrder == order else {
            throw APIError.badCursor("the cursor belongs to sort=\(cursorOrder.rawValue), not sort=\(order.rawValue)")
        }
        let taken = payload.dropFirst(2).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let path = payload.dropFirst(10)
        guard !path.contains(0) else { throw APIError.badCursor("the cursor is not one this server gave") }
        self.init(order: order, key: ListingKey(takenMilliseconds: Int64(bitPattern: taken), path: DiskPath(bytes: path)))
    }

    /// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3: Fowler, Noll, Vo,
    /// draft-eastlake-fnv §2) of `bytes`.
    static func check(_ bytes: some Sequence<UInt8>) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }
}

extension APIError {
    /// 400 `bad_cursor`: an `after` that is not a cursor this server gave, or one of another sort.
    static func badCursor(_ message: String) -> APIError { APIError(status: 400, code: "bad_cursor", message: message) }
}
