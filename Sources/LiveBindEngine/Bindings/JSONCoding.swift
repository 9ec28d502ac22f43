#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Converts between `JSON` and Swift `Codable` types for closure and object bindings.
///
/// Scalars (`Double`, `Int`, `String`, `Bool`) convert directly; anything else goes through Foundation's
/// JSON coder (the one place the engine uses Foundation).
enum JSONCoding {
    /// `json` as a `Value`.
    static func decode<Value: Decodable>(_ type: Value.Type, from json: JSON) throws -> Value {
        switch json {
        case .int(let number):
            if let value = number as? Value { return value }
            if Value.self == Double.self, let value = Double(number) as? Value { return value }
        case .double(let number):
            if let value = number as? Value { return value }
        case .string(let text):
            if let value = text as? Value { return value }
        case .bool(let flag):
            if let value = flag as? Value { return value }
        default:
            break
        }
        return try JSONDecoder().decode(Value.self, from: Data(json.encoded()))
    }

    /// `value` as JSON.
    static func encode<Value: Encodable>(_ value: Value) throws -> JSON {
        switch value {
        case let number as Int: return .int(number)
        case let number as Double: return .double(number)
        case let text as String: return .string(text)
        case let flag as Bool: return .bool(flag)
        default:
            let data = try JSONEncoder().encode(value)
            return try JSON(parsing: Array(data))
        }
    }
}
