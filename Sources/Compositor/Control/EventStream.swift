import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The server-sent events of `/v1/events`, read as they come: `init` returns once the server has accepted the
/// stream (so no later event is missed), `next` waits for an event.
///
/// Read from a plain socket with `poll`, not URLSession: FoundationNetworking on Linux keeps a long-lived response
/// busy in its dispatch sources, and `pipcompose ctl events` used 80 % of a core while waiting for nothing.
/// The control server speaks HTTP/1.1 and sends the stream chunked.
///
/// `@unchecked Sendable`: one thread reads (`next`), and `close` is called by that thread or after it is done.
public final class EventStream: @unchecked Sendable {
    public struct Event: Sendable, Decodable {
        public let type: String
        public let details: [String: String]
    }

    private var socket: Int32 = -1
    /// Bytes as they came off the socket, not yet taken out of their chunks.
    private var raw: [UInt8] = []
    /// The response body so far, not yet split into events.
    private var body: [UInt8] = []
    private var chunked = false
    private var ended = false

    /// Connects; throws if the server cannot be reached or refuses (a wrong token).
    public init(client: ControlClient, timeout: TimeInterval = 10) throws(ControlClient.Failure) {
        guard let url = URL(string: client.base + "/v1/events"), let host = url.host else {
            throw ControlClient.Failure(status: 0, message: "bad URL \(client.base)")
        }
        guard url.scheme == "http" else {
            throw ControlClient.Failure(status: 0, message: "events are read over plain http (what the control server speaks), got \(client.base)")
        }
        let unreachable = { (why: String) in
            ControlClient.Failure(status: 0, message: "cannot read events from \(client.base): \(why); is it running with --control?")
        }
        socket = try Self.connect(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")),
                                  port: url.port ?? 80, unreachable: unreachable)
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let hostHeader = (bare.contains(":") ? "[\(bare)]" : bare) + ":\(url.port ?? 80)"
        var request = "GET /v1/events HTTP/1.1\r\nHost: \(hostHeader)\r\nAccept: text/event-stream\r\n"
        if let token = client.token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else {
                close()
                throw unreachable(String(cString: strerror(errno)))
            }
            sent += n
        }
        let deadline = Date().addingTimeInterval(timeout)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = Self.find(separator, in: raw)
            if headEnd == nil && !fill(until: deadline) { break }
        }
        guard let headEnd else {
            close()
            throw unreachable(ended ? "the connection closed" : "no answer within \(Int(timeout)) s")
        }
        let head = String(decoding: raw[..<headEnd], as: UTF8.self).lowercased()
        raw.removeFirst(headEnd + separator.count)
        let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        guard status == 200 else {
            close()
            let hint = status == 401 ? ": missing or wrong token (ctl --token TOKEN; only the user who started run "
                + "finds it by itself)" : status == 403 ? ": refused by its Host or Origin check" : ""
            throw ControlClient.Failure(status: status, message: "cannot read events from \(client.base) (status \(status))\(hint)")
        }
        chunked = head.contains("transfer-encoding: chunked")
    }

    deinit { close() }

    /// The next event for which `match` holds (earlier ones are passed over), or nil after `timeout` or when
    /// the server ended the stream.
    public func next(timeout: TimeInterval = .infinity, where match: (Event) -> Bool = { _ in true }) -> Event? {
        nextLine(timeout: timeout, where: match)?.event
    }

    /// As `next`, with the event's JSON as the server sent it.
    public func nextLine(timeout: TimeInterval = .infinity,
                         where match: (Event) -> Bool = { _ in true }) -> (event: Event, line: String)? {
        let deadline = timeout.isFinite ? Date().addingTimeInterval(timeout) : nil
        while true {
            unchunk()
            while let block = takeBlock() {
                for line in block.split(separator: "\n") where line.hasPrefix("data: ") {
                    let json = String(line.dropFirst(6))
                    if let e = try? JSONDecoder().decode(Event.self, from: Data(json.utf8)), match(e) { return (e, json) }
                }
            }
            if ended || !fill(until: deadline) { return nil }
        }
    }

    public func close() {
        guard socket >= 0 else { return }
        shutdown(socket, Int32(SHUT_RDWR))
        Glibc.close(socket)
        socket = -1
        ended = true
    }

    /// Reads what the socket has, waiting until `deadline` (nil: as long as it takes); false on timeout or end.
    private func fill(until deadline: Date?) -> Bool {
        guard socket >= 0 else { return false }
        while true {
            var pfd = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let wait = deadline.map { Int32(max(0, min(Double(Int32.max), $0.timeIntervalSinceNow * 1000))) } ?? -1
            let ready = poll(&pfd, 1, wait)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return false }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                ended = true
                return false
            }
            raw.append(contentsOf: chunk[..<n])
            return true
        }
    }

    /// Moves whole chunks (or everything, when the body is not chunked) from `raw` to `body`.
    private func unchunk() {
        guard chunked else {
            body.append(contentsOf: raw)
            raw.removeAll(keepingCapacity: true)
            return
        }
        let crlf: [UInt8] = [13, 10]
        while let lineEnd = Self.find(crlf, in: raw) {
            let sizeText = String(decoding: raw[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                ended = true   // not HTTP chunking: nothing more can be read sensibly
                return
            }
            if size == 0 {
                ended = true
                return
            }
            let start = lineEnd + 2
            guard raw.count >= start + size + 2 else { return }
            body.append(contentsOf: raw[start..<(start + size)])
            raw.removeFirst(start + size + 2)
        }
    }

    /// One event block (the text before a blank line), taken out of `body`.
    private func takeBlock() -> String? {
        guard let end = Self.find([10, 10], in: body) else { return nil }
        let block = String(decoding: body[..<end], as: UTF8.self)
        body.removeFirst(end + 2)
        return block
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { i in
            needle.indices.allSatisfy { haystack[i + $0] == needle[$0] }
        }
    }

    private static func connect(host: String, port: Int,
                                unreachable: (String) -> ControlClient.Failure) throws(ControlClient.Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let looked = getaddrinfo(host, String(port), &hints, &list)
        guard looked == 0, let list else { throw unreachable("cannot resolve \(host): \(String(cString: gai_strerror(looked)))") }
        defer { freeaddrinfo(list) }
        var why = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let a = entry {
            let fd = Glibc.socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if fd >= 0 {
                if Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return fd }
                why = String(cString: strerror(errno))
                Glibc.close(fd)
            }
            entry = a.pointee.ai_next
        }
        throw unreachable(why)
    }
}
