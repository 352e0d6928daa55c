import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client of a running pipcompose's control API: what `pipcompose ctl` and the tests use. Calls block until
/// the server answers; a refused request throws the server's status and message.
public struct ControlClient: Sendable {
    public let base: String
    public let token: String?

    public struct Failure: Error, CustomStringConvertible {
        /// The HTTP status, or 0 when the server could not be reached.
        public let status: Int
        public let message: String
        public var description: String { message }
    }

    /// `base` like `http://127.0.0.1:8555`.
    public init(base: String, token: String?) throws(Failure) {
        let trimmed = base.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard let url = URL(string: trimmed), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw Failure(status: 0, message: "the control URL must look like http://127.0.0.1:8555, got '\(base)'")
        }
        self.base = trimmed
        self.token = token
    }

    /// A client of the instance at `base` with the token its user's `run` stored (`ControlToken`), when `base` is
    /// on this machine and one is there; the token is never sent off loopback unless given.
    public static func local(base: String, token: String? = nil) throws(Failure) -> ControlClient {
        let probe = try ControlClient(base: base, token: nil)
        return try ControlClient(base: probe.base, token: token ?? probe.storedToken())
    }

    /// The token stored for this address's port, when the address is loopback.
    public func storedToken() -> String? {
        guard let url = URL(string: base), let host = url.host, ControlServer.isLoopback(host) else { return nil }
        return ControlToken.load(port: url.port ?? 80)
    }

    /// The id the server gives a recording of `path` (an absolute path) or a push to `url`.
    public static func recordID(_ path: String) -> String { "record:" + URL(fileURLWithPath: path).path }
    public static func pushID(_ url: String) -> String { "push:" + url }

    /// Sends one request; returns the body of a 2xx answer.
    @discardableResult
    public func send(_ method: String, _ path: String, json body: [String: JSONValue]? = nil) throws(Failure) -> Data {
        let data = body.flatMap { try? JSONEncoder().encode($0) }
        let (status, answer) = try exchange(method, path, body: data)
        guard (200..<300).contains(status) else {
            throw Failure(status: status, message: "refused (\(status)): \(Self.message(in: answer))")
        }
        return answer
    }

    /// Sends `body` as it is (JSON or not) and returns whatever status and body came back; throws only when
    /// the server cannot be reached.
    public func exchange(_ method: String, _ path: String, body: Data? = nil) throws(Failure) -> (status: Int, body: Data) {
        let r = try request(method, path, body: body, contentType: "application/json")
        return (r.status, r.body)
    }

    /// Sends `body` with its own content type (an SDP offer to WHEP) and returns the status, the response's headers
    /// and body; throws only when the server cannot be reached.
    public func request(_ method: String, _ path: String, body: Data?, contentType: String)
        throws(Failure) -> (status: Int, headers: [String: String], body: Data) {
        guard let url = URL(string: base + path) else { throw Failure(status: 0, message: "bad URL \(base + path)") }
        var req = URLRequest(url: url, timeoutInterval: 30)
        req.httpMethod = method
        authorize(&req)
        if let body { req.httpBody = body }
        // The API wants the content type on every request that could carry a body, an empty one too.
        if body != nil || ["POST", "PUT", "PATCH"].contains(method.uppercased()) {
            req.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        let answer = Answer()
        URLSession.shared.dataTask(with: req) { d, r, e in answer.set(d, r, e) }.resume()
        let (data, response, error) = answer.wait()
        if let error {
            throw Failure(status: 0, message: "cannot reach pipcompose at \(base): \(error.localizedDescription); "
                          + "is it running with --control?")
        }
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (k, v) in http?.allHeaderFields ?? [:] { headers[String(describing: k).lowercased()] = String(describing: v) }
        return (http?.statusCode ?? 0, headers, data)
    }

    /// Starts a recording or push; returns its id. A trailing `@WxH` (`small.mp4@416x234`) names the rendition it
    /// carries.
    public func startOutput(record path: String? = nil, push url: String? = nil, overwrite: Bool = false)
        throws(Failure) -> String {
        var body: [String: JSONValue] = [:]
        var rendition: PixelSize?
        if let path {
            let (file, size) = Rendition.splitOutput(path)
            body["record"] = .string(URL(fileURLWithPath: file).path)
            rendition = size
        }
        if overwrite { body["overwrite"] = .bool(true) }
        if let url {
            let (target, size) = Rendition.splitOutput(url)
            body["push"] = .string(target)
            rendition = size
        }
        if let rendition { body["rendition"] = .string(rendition.description) }
        let data = try send("POST", "/v1/outputs", json: body)
        return (try? JSONDecoder().decode([String: String].self, from: data))?["started"] ?? ""
    }

    /// Stops an output and waits until the server reports it finalized (`didStop`); returns whether the file
    /// was finalized in time.
    public func stopOutput(id: String, timeout: TimeInterval = 30) throws(Failure) -> Bool {
        let events = try EventStream(client: self)
        defer { events.close() }
        var c = URLComponents()
        c.queryItems = [URLQueryItem(name: "id", value: id)]
        try send("DELETE", "/v1/outputs?" + (c.percentEncodedQuery ?? ""))
        guard let done = events.next(timeout: timeout, where: { $0.type == "didStop" && $0.details["output"] == id }) else {
            throw Failure(status: 0, message: "\(id) was asked to stop but did not report its end within \(Int(timeout)) s")
        }
        return done.details["finalized"] == "true"
    }

    func authorize(_ req: inout URLRequest) {
        if let token { req.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    }

    static func message(in data: Data) -> String {
        struct Body: Decodable { struct E: Decodable { let message: String }; let error: E }
        return (try? JSONDecoder().decode(Body.self, from: data))?.error.message ?? String(decoding: data, as: UTF8.self)
    }
}

/// One answer of URLSession, handed from its delegate queue to the caller.
///
/// `@unchecked Sendable`: the fields are written once, before `done` is signalled, and read after the wait.
private final class Answer: @unchecked Sendable {
    private var data = Data()
    private var response: URLResponse?
    private var error: (any Error)?
    private let done = DispatchSemaphore(value: 0)

    func set(_ d: Data?, _ r: URLResponse?, _ e: (any Error)?) {
        data = d ?? Data()
        response = r
        error = e
        done.signal()
    }

    func wait() -> (Data, URLResponse?, (any Error)?) {
        done.wait()
        return (data, response, error)
    }
}
