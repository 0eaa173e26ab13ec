import Foundation

/// A JSON object read field for field through `Codable` (`StrictJSON.decode`): every field it
/// may carry, with the JSON type each must have, so that an unknown field is refused by name
/// (with the nearest known one) and a wrong type by the field and the type it needs.
protocol StrictJSONObject: Decodable {
    /// Each field's name and the JSON it must hold, as a refusal says it (`a string`).
    static var fields: [(name: String, type: String)] { get }
}

extension StrictJSON {
    /// `T` decoded from `body`, strictly: its syntax as `syntaxError(in:)` checks it, then its
    /// values by `JSONDecoder` (`T`'s own `init(from:)` refuses what its fields cannot hold).
    /// - Throws: `APIError` 400 `bad_request` naming the position of a syntax error, the field
    ///   and the type it needs for a wrong type or null, or the missing field; an `APIError`
    ///   that `T` throws itself, as it is.
    static func decode<T: StrictJSONObject>(_ type: T.Type, body: [UInt8]) throws(APIError) -> T {
        if let error = syntaxError(in: body) { throw APIError.badRequest("the body is not JSON: \(error)") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as APIError {
            throw error
        } catch let error as DecodingError {
            throw APIError.badRequest(message(for: error, in: T.self))
        } catch {
            throw APIError.badRequest("the body must be a JSON object")
        }
    }

    /// Refuses a field of the object `decoder` reads that `T.fields` does not name.
    /// - Throws: `APIError` 400 naming the field, with the closest known one
    ///   (`ConfigLoader.suggestion`) or the list of them.
    static func refuseUnknownFields<T: StrictJSONObject>(of type: T.Type, in decoder: any Decoder) throws {
        let known = T.fields.map(\.name)
        for key in try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted()
        where !known.contains(key) {
            let hint = ConfigLoader.closest(to: key, among: known).map { "did you mean \"\($0)\"?" }
                ?? "the fields are " + known.joined(separator: ", ")
            throw APIError.badRequest("unknown field \(JSON.quote(key)) (\(hint))")
        }
    }

    /// The sentence for a value the decoder could not read: the field by its path
    /// (`paths[2]`), and what it must be.
    private static func message<T: StrictJSONObject>(for error: DecodingError, in type: T.Type) -> String {
        func field(_ path: [any CodingKey]) -> String {
            path.reduce("") { name, key in key.intValue.map { name + "[\($0)]" } ?? (name.isEmpty ? "" : name + ".") + key.stringValue }
        }
        func wanted(_ path: [any CodingKey], _ type: Any.Type) -> String {
            if path.count == 1, let declared = T.fields.first(where: { $0.name == path[0].stringValue }) { return declared.type }
            if type == String.self { return "a string" }
            if type == Bool.self { return "true or false" }
            if type == Double.self || type == Int.self { return "a number" }
            return "\(type)".hasPrefix("Array") ? "an array" : "an object"
        }
        switch error {
        case .typeMismatch(let type, let context) where !context.codingPath.isEmpty:
            return "\(field(context.codingPath)) must be \(wanted(context.codingPath, type))"
        case .valueNotFound(let type, let context) where !context.codingPath.isEmpty:
            return "\(field(context.codingPath)) must be \(wanted(context.codingPath, type)), not null"
        case .keyNotFound(let key, let context):
            return "\(field(context.codingPath + [key])) is missing"
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            return "\(field(context.codingPath)) cannot be read: \(context.debugDescription)"
        default:
            return "the body must be a JSON object"
        }
    }

    /// Any key of an object, for listing them all.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension KeyedDecodingContainer {
    /// The value of `key`, nil when the object has no such field; a field that is there holds
    /// a `T`: null is refused as any other wrong type is (a `DecodingError.valueNotFound`).
    func strictIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        contains(key) ? try decode(T.self, forKey: key) : nil
    }
}
