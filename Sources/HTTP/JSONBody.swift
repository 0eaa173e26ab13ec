import Foundation

/// JSON response bodies written by `JSONEncoder`, one configuration for the whole server: keys
/// sorted (on Linux, swift-foundation's `JSONEncoder` writes an object's keys in its
/// dictionary's hash order, which changes from one process to the next; sorted, the same value
/// is always the same bytes), `/` left unescaped (the bodies are full of URL paths; `\/` is
/// legal but needless), no spaces.
public enum JSONBody {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// `value` as JSON text (RFC 8259). Traps for a value `JSONEncoder` refuses: only a
    /// non-finite floating-point number, which no body the server writes holds.
    public static func encode(_ value: some Encodable) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            preconditionFailure("a JSON body that JSONEncoder refuses: \(error)")
        }
    }
}
