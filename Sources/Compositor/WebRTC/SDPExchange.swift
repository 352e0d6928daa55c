import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP half of WHIP (RFC 9725) and WHEP (draft-ietf-wish-whep), the same for both: an SDP offer posted with a
/// bearer token, `201 Created` with the SDP answer and the session's `Location`, and `DELETE` on that location to
/// end it. Errors say what the server sent back instead.
struct SDPExchange: Sendable {
    /// "WHEP" or "WHIP", for messages.
    let kind: String
    let endpoint: URL
    let token: String?
    /// How long the server may take to answer.
    let timeout: TimeInterval

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `whep+http://HOST/PATH` (prefix `whep`) → `http://HOST/PATH`; nil for another scheme.
    static func endpoint(of url: String, prefix: String) -> URL? {
        let lower = url.lowercased()
        guard lower.hasPrefix("\(prefix)+http://") || lower.hasPrefix("\(prefix)+https://") else { return nil }
        return URL(string: String(url.dropFirst(prefix.count + 1)))
    }

    /// Posts the offer; returns the answer's SDP, the session's location (nil when the server gave none) and its
    /// ETag (for trickle `PATCH`es).
    func post(offer: String) throws(Failure) -> (answer: String, location: URL?, etag: String?) {
        var request = URLRequest(url: endpoint, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/sdp", forHTTPHeaderField: "Content-Type")
        request.setValue("application/sdp", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = Data(offer.utf8)
        let (data, response) = try send(request)
        let body = String(decoding: data, as: UTF8.self)
        guard (200...299).contains(response.statusCode) else {
            throw Failure(description: "the \(kind) server answered \(response.statusCode)"
                          + (Self.excerpt(body).map { ": \($0)" } ?? "") + hint(for: response.statusCode))
        }
        guard body.hasPrefix("v=0") else {
            let type = response.value(forHTTPHeaderField: "Content-Type") ?? "no Content-Type"
            throw Failure(description: "the \(kind) server answered \(response.statusCode) with \(type), not an SDP answer"
                          + (Self.excerpt(body).map { ": \($0)" } ?? ""))
        }
        let location = response.value(forHTTPHeaderField: "Location").flatMap { URL(string: $0, relativeTo: endpoint)?.absoluteURL }
        return (body, location, response.value(forHTTPHeaderField: "ETag"))
    }

    /// Sends candidates found after the offer (trickle ICE, RFC 8840) to the session at `location`; returns the
    /// server's status (204: taken; 405 or 501: it takes no trickle) and its message.
    func patch(_ location: URL, fragment: String, etag: String?) throws(Failure) -> (status: Int, message: String) {
        var request = URLRequest(url: location, timeoutInterval: timeout)
        request.httpMethod = "PATCH"
        request.setValue("application/trickle-ice-sdpfrag", forHTTPHeaderField: "Content-Type")
        if let etag { request.setValue(etag, forHTTPHeaderField: "If-Match") }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = Data(fragment.utf8)
        let (data, response) = try send(request)
        return (response.statusCode, Self.excerpt(String(decoding: data, as: UTF8.self)) ?? "")
    }

    /// Ends the session at `location`; a server that does not answer within 3 s is left to time it out.
    func delete(_ location: URL) {
        var request = URLRequest(url: location, timeoutInterval: 3)
        request.httpMethod = "DELETE"
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        _ = try? send(request)
    }

    private func send(_ request: URLRequest) throws(Failure) -> (Data, HTTPURLResponse) {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox()
        let where_ = request.url?.absoluteString ?? ""
        let task = URLSession.shared.dataTask(with: request) { [kind] data, response, error in
            if let response = response as? HTTPURLResponse {
                box.set(.success((data ?? Data(), response)))
            } else {
                let why = error.map { $0.localizedDescription } ?? "no HTTP answer"
                box.set(.failure(Failure(description: "cannot reach the \(kind) server at \(where_): \(why)")))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + request.timeoutInterval + 1) == .timedOut {
            task.cancel()
            throw Failure(description: "the \(kind) server at \(where_) did not answer within \(Int(request.timeoutInterval)) s")
        }
        return try box.get()
    }

    /// The start of a reply's body, on one line, for an error message.
    private static func excerpt(_ body: String) -> String? {
        let line = body.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces)
        guard !line.isEmpty else { return nil }
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }

    private func hint(for status: Int) -> String {
        switch status {
        case 401, 403: " (give the server's token: --\(kind.lowercased())-token or PIPCOMPOSE_\(kind)_TOKEN)"
        case 404: " (is the path right?\(kind == "WHEP" ? " pipcompose serves /v1/whep" : ""))"
        case 503: " (the server is full or stopping; try again later)"
        default: ""
        }
    }
}

/// What a URLSession callback hands back to the waiting thread.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<(Data, HTTPURLResponse), SDPExchange.Failure>?
    func set(_ r: Result<(Data, HTTPURLResponse), SDPExchange.Failure>) { lock.withLock { result = r } }
    func get() throws(SDPExchange.Failure) -> (Data, HTTPURLResponse) {
        guard let r = lock.withLock({ result }) else { throw SDPExchange.Failure(description: "no answer") }
        return try r.get()
    }
}

/// One session on a WHIP or WHEP server: opened by posting the offer (its location kept), ended once with `DELETE`.
/// `@unchecked Sendable`: the location and `ended` are behind `lock`.
final class SDPSession: @unchecked Sendable {
    let exchange: SDPExchange
    private let lock = NSLock()
    private var location: URL?
    private var etag: String?
    private var ended = false

    init(_ exchange: SDPExchange) { self.exchange = exchange }

    /// Posts the offer and returns the answer's SDP; throws what the server said instead.
    func open(offer: String) throws(SDPExchange.Failure) -> String {
        let reply = try exchange.post(offer: offer)
        lock.withLock {
            location = reply.location
            etag = reply.etag
        }
        return reply.answer
    }

    /// Sends a trickle ICE fragment to the session; the server's status and message (0: it gave no location, so
    /// there is nowhere to send it).
    func trickle(_ fragment: String) throws(SDPExchange.Failure) -> (status: Int, message: String) {
        guard let (url, tag) = lock.withLock({ location.map { ($0, etag) } }) else { return (0, "no session location") }
        return try exchange.patch(url, fragment: fragment, etag: tag)
    }

    var isEnded: Bool { lock.withLock { ended } }

    /// Ends the session on the server (`DELETE` on its location), once; a server that gave no location is left to
    /// time it out.
    func end() {
        guard let url = lock.withLock({ () -> URL? in
            defer { ended = true }
            return ended ? nil : location
        }) else { return }
        exchange.delete(url)
    }
}
