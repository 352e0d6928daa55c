import Foundation

/// Any JSON value, decoded strictly: `true` is not a number and `1` is not a boolean.
public enum JSONValue: Decodable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// How the value is called in messages.
    public var kind: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .array: "a list"
        case .object: "an object"
        case .null: "null"
        }
    }
}

extension JSONValue: Encodable {
    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .number(let d): try c.encode(d)
        case .bool(let b): try c.encode(b)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        case .null: try c.encodeNil()
        }
    }
}

extension JSONValue {
    /// A value typed on a command line: numbers, true/false and [lists] as such, anything else as text (with
    /// `\n` as a line break).
    public static func parse(commandLine s: String) -> JSONValue {
        if let d = Double(s) { return .number(d) }
        if s == "true" || s == "false" { return .bool(s == "true") }
        if s.hasPrefix("["), let v = try? JSONDecoder().decode(JSONValue.self, from: Data(s.utf8)) { return v }
        return .string(s.replacingOccurrences(of: "\\n", with: "\n"))
    }
}

extension JSONValue {
    /// The value as JSON text, keys sorted (the same value, the same text).
    public var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}
