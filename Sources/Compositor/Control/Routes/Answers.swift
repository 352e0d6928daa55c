import Foundation
import Hummingbird

extension Response {
    /// `value` as the API's JSON: keys sorted, dates in ISO 8601.
    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}

extension HTTPError {
    /// The answer for what a route's work threw: a session's refusal with its status and words, an answer already
    /// worded as it is, anything else a 500.
    static func answering(_ error: any Error) -> HTTPError {
        if let e = error as? HTTPError { return e }
        if let e = error as? ControlError { return HTTPError(HTTPResponse.Status(code: e.status), message: e.message) }
        return HTTPError(.internalServerError, message: "\(error)")
    }
}
