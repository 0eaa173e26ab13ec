import Foundation

/// Typed reads of values from `JSONSerialization`, which on Linux hands back `NSNumber` for
/// numbers and booleans alike (and `NSNumber(0) is Bool` is true): booleans are told apart by
/// their Objective-C type code `c`.
enum JSONValue {
    static func boolean(_ value: Any?) -> Bool? {
        guard let number = value as? NSNumber, isBoolean(number) else { return nil }
        return number.boolValue
    }

    /// A whole number (no fraction, not a boolean) within `Int64`.
    static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        let double = number.doubleValue
        guard double == double.rounded(), abs(double) < 9.0e15 else { return nil }
        return number.intValue
    }

    /// Any number that is not a boolean.
    static func number(_ value: Any?) -> Double? {
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        return number.doubleValue
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}
