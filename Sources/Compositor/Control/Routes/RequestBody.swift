import Foundation
import Hummingbird

extension Request {
    /// The body, a JSON object of at most `ControlServer.maxBody`, as `Body`; with `allowEmpty`, no body reads as
    /// `{}`. Refusals (400 naming the problem, 413) are worded as the API has always worded them, which is why this
    /// is not Hummingbird's `decode(as:context:)`: that words decoding errors its own way and allows 2 MB.
    ///
    /// The whole object is read as `JSONValue`s first, so that a value in a field the route does not read must still
    /// be one (a number past `Double`'s range or a lone surrogate is refused, as it always was).
    ///
    /// `fields`: the fields this route takes, where its body type serves more than one route (else `KnownFields`).
    func jsonBody<Body: Decodable>(as type: Body.Type, allowEmpty: Bool = false, fields: [String]? = nil) async throws -> Body {
        let buffer: ByteBuffer
        do { buffer = try await body.collect(upTo: ControlServer.maxBody) } catch {
            throw HTTPError(.contentTooLarge, message: "the body is larger than 1 MB")
        }
        if buffer.readableBytes == 0 && !allowEmpty {
            throw HTTPError(.badRequest, message: "the body is empty: this route takes a JSON object (docs/CONTROL.md)")
        }
        let data = buffer.readableBytes == 0 ? Data("{}".utf8) : Data(buffer.readableBytesView)
        let object: [String: JSONValue], body: Body
        do {
            object = try JSONDecoder().decode([String: JSONValue].self, from: data)
            body = try JSONDecoder().decode(type, from: data)
        } catch DecodingError.typeMismatch {
            throw HTTPError(.badRequest, message: "expected a JSON object")
        } catch DecodingError.dataCorrupted(let context) {
            let cause = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            throw HTTPError(.badRequest, message: "malformed JSON: \(cause)")
        } catch {
            throw HTTPError(.badRequest, message: "malformed JSON: \(error)")
        }
        if let known = fields ?? (Body.self as? any KnownFields.Type)?.fields,
           let field = object.keys.sorted().first(where: { !known.contains($0) }) {
            let near = NearestName.to(field, in: known).map { " (did you mean '\($0)'?)" } ?? ""
            throw HTTPError(.badRequest, message: "\(method.rawValue) \(uri.path) has no field '\(field)'\(near); it takes: "
                                                 + known.joined(separator: ", "))
        }
        return body
    }
}

/// A request body whose fields are all known: a field the route does not read is refused (400), naming the fields
/// it does, so that a misspelt one (`"overwite": true`) never goes unread as if it had not been sent.
protocol KnownFields {
    static var fields: [String] { get }
}

/// A field of a request body as it was sent: absent, of the type the route reads, or some other JSON value (null
/// included). Decoding refuses nothing but a body that is not a JSON object: each route checks its fields in its
/// own order, taking some of another type as absent (`value` is nil) and refusing others in their own words.
enum Sent<Wanted: Decodable>: Decodable {
    case absent
    case value(Wanted)
    case other(JSONValue)

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let value = try? c.decode(Wanted.self) {
            self = .value(value)
        } else {
            self = .other(try c.decode(JSONValue.self))
        }
    }

    /// The value when it has the type the route reads; nil when absent or of another type.
    var value: Wanted? {
        if case .value(let v) = self { v } else { nil }
    }
}

extension KeyedDecodingContainer {
    /// What a synthesized `init(from:)` calls for a `Sent` property: an absent key is `.absent`, not an error, and
    /// a null stays `.other(.null)` (the synthesized `Optional` decoding would take it for absent).
    func decode<Wanted>(_ type: Sent<Wanted>.Type, forKey key: Key) throws -> Sent<Wanted> {
        contains(key) ? try decodeIfPresent(type, forKey: key) ?? .other(.null) : .absent
    }
}

extension PixelSize {
    /// `{"width": W, "height": H}` as a checked picture size; nil unless both are numbers.
    static func requested(width: Sent<Double>, height: Sent<Double>) throws -> PixelSize? {
        guard let w = width.value, let h = height.value else { return nil }
        guard w.isFinite, h.isFinite, abs(w) < 1e6, abs(h) < 1e6 else {
            throw HTTPError(.badRequest, message: "width and height must be whole numbers of pixels")
        }
        do { return try RenderSize.check(PixelSize(width: Int(w), height: Int(h))) } catch {
            throw HTTPError(.badRequest, message: "\(error)")
        }
    }
}
