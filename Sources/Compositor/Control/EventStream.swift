import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server-sent events of `/v1/events`, read as they come: `init` returns once the server has accepted the
/// stream (so no later event is missed), `next` waits for an event.
///
/// `@unchecked Sendable`: URLSession calls the delegate methods on its own serial queue; everything they share
/// with the reader (`received`, `ended`, `status`) is behind `cond`.
public final class EventStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    public struct Event: Sendable, Decodable {
        public let type: String
        public let details: [String: String]
    }

    private let cond = NSCondition()
    private var received: [(event: Event, line: String)] = []
    private var pending = ""
    private var status: Int?
    private var ended = false
    private var session: URLSession?

    /// Connects; throws if the server cannot be reached or refuses (a wrong token).
    public init(client: ControlClient, timeout: TimeInterval = 10) throws(ControlClient.Failure) {
        super.init()
        guard let url = URL(string: client.base + "/v1/events") else {
            throw ControlClient.Failure(status: 0, message: "bad URL \(client.base)")
        }
        var req = URLRequest(url: url, timeoutInterval: 24 * 3600)
        client.authorize(&req)
        let session = URLSession(configuration: .default, delegate: self, delegateQueue: nil)
        self.session = session
        session.dataTask(with: req).resume()
        let answered = cond.withLock { () -> Int? in
            let deadline = Date().addingTimeInterval(timeout)
            while status == nil && !ended && cond.wait(until: deadline) {}
            return status
        }
        guard answered == 200 else {
            close()
            throw ControlClient.Failure(status: answered ?? 0, message: "cannot read events from \(client.base)"
                                        + (answered.map { " (status \($0))" } ?? ": no answer"))
        }
    }

    /// The next event for which `match` holds (earlier ones are passed over), or nil after `timeout` or when
    /// the server ended the stream.
    public func next(timeout: TimeInterval = .infinity, where match: (Event) -> Bool = { _ in true }) -> Event? {
        nextLine(timeout: timeout, where: match)?.event
    }

    /// As `next`, with the event's JSON as the server sent it.
    public func nextLine(timeout: TimeInterval = .infinity,
                         where match: (Event) -> Bool = { _ in true }) -> (event: Event, line: String)? {
        let deadline = timeout.isFinite ? Date().addingTimeInterval(timeout) : nil
        return cond.withLock {
            while true {
                while !received.isEmpty {
                    let first = received.removeFirst()
                    if match(first.event) { return first }
                }
                if ended { return nil }
                // (Foundation on Linux traps on a wait until `distantFuture`: no deadline waits plainly.)
                if let deadline {
                    if !cond.wait(until: deadline) { return nil }
                } else {
                    cond.wait()
                }
            }
        }
    }

    public func close() {
        session?.invalidateAndCancel()
        session = nil
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                           completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        cond.withLock {
            status = (response as? HTTPURLResponse)?.statusCode ?? 0
            cond.broadcast()
        }
        completionHandler(.allow)
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        cond.withLock {
            pending += String(decoding: data, as: UTF8.self)
            while let r = pending.range(of: "\n\n") {
                let block = pending[..<r.lowerBound]
                pending = String(pending[r.upperBound...])
                for line in block.split(separator: "\n") where line.hasPrefix("data: ") {
                    let json = String(line.dropFirst(6))
                    if let e = try? JSONDecoder().decode(Event.self, from: Data(json.utf8)) { received.append((e, json)) }
                }
            }
            cond.broadcast()
        }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        cond.withLock {
            ended = true
            cond.broadcast()
        }
    }
}
