import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `pipcompose ctl …`: the control API from the command line. Prints the server's JSON; exits non-zero with
/// the server's message when a request is refused.
struct CtlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Control a running pipcompose: resize, pause, play, skip, set widget properties, record.",
        discussion: """
        Examples:
          pipcompose ctl status
          pipcompose ctl resize 480x270
          pipcompose ctl pause | play | skip -15
          pipcompose ctl set memo.text "First line\\nSecond line"
          pipcompose ctl nowplaying --title "Song" --artist "Band" --position 0
          pipcompose ctl record start /tmp/clip.mp4    |  pipcompose ctl record stop /tmp/clip.mp4
          pipcompose ctl frame --size 320x180 -o now.png
          pipcompose ctl events
        """
    )

    @Option(help: "The instance's control URL (default: $PIPCOMPOSE_CONTROL or http://127.0.0.1:8555).")
    var control: String?

    @Option(help: "Bearer token (default: $PIPCOMPOSE_CONTROL_TOKEN).")
    var token: String?

    @Option(help: "Widget id for `nowplaying` (default: the first now-playing widget, 'nowplaying').")
    var widget: String = "nowplaying"

    @Option(help: "For `nowplaying`: the title.") var title: String?
    @Option(help: "For `nowplaying`: the artist.") var artist: String?
    @Option(help: "For `nowplaying`: the album.") var album: String?
    @Option(help: "For `nowplaying`: artwork file.") var artwork: String?
    @Option(help: "For `nowplaying`: track length in seconds.") var duration: Double?
    @Option(help: "For `nowplaying`: position in seconds.") var position: Double?
    @Option(help: "For `frame`: size WxH.") var size: String?
    @Option(name: .shortAndLong, help: "For `frame`: output PNG path.") var output: String?

    @Argument(parsing: .allUnrecognized, help: "status | resize WxH | pause | play | skip [SECONDS] | set ID.PROPERTY VALUE | nowplaying | record start|stop FILE | push start|stop URL | frame | events")
    var words: [String] = []

    var base: String {
        (control ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_CONTROL"] ?? "http://127.0.0.1:8555")
            .trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    }

    func validate() throws {
        guard let verb = words.first else { throw ValidationError("give a command: status, resize, pause, play, skip, set, nowplaying, record, push, frame, events") }
        let known = ["status", "resize", "pause", "play", "skip", "set", "nowplaying", "record", "push", "frame", "events"]
        guard known.contains(verb) else { throw ValidationError("unknown command '\(verb)'; use one of \(known.joined(separator: ", "))") }
        guard URL(string: base)?.host != nil else { throw ValidationError("--control must be a URL like http://127.0.0.1:8555") }
    }

    func run() throws {
        let verb = words[0]
        let args = Array(words.dropFirst())
        switch verb {
        case "status": try call("GET", "/v1/status")
        case "pause": try call("POST", "/v1/pause")
        case "play": try call("POST", "/v1/play")
        case "resize":
            guard let s = args.first else { throw ValidationError("resize needs a size, e.g. resize 480x270") }
            try call("POST", "/v1/resize", ["size": s])
        case "skip":
            let seconds = try args.first.map { a -> Double in
                guard let d = Double(a) else { throw ValidationError("skip takes seconds, e.g. skip -15") }
                return d
            } ?? 15
            try call("POST", "/v1/skip", ["seconds": seconds])
        case "set":
            guard args.count == 2, let dot = args[0].firstIndex(of: ".") else {
                throw ValidationError("set takes ID.PROPERTY VALUE, e.g. set memo.text \"Hello\"")
            }
            let id = String(args[0][..<dot]), prop = String(args[0][args[0].index(after: dot)...])
            try call("PATCH", "/v1/widgets/\(id)", [prop: jsonValue(args[1])])
        case "nowplaying":
            var body: [String: Any] = [:]
            if let title { body["title"] = title }
            if let artist { body["artist"] = artist }
            if let album { body["album"] = album }
            if let artwork { body["artwork"] = artwork }
            if let duration { body["duration"] = duration }
            if let position { body["position"] = position }
            for a in args where a == "play" || a == "pause" { body["playing"] = a == "play" }
            try call("PATCH", "/v1/widgets/\(widget)", body)
        case "record", "push":
            guard args.count == 2, ["start", "stop"].contains(args[0]) else {
                throw ValidationError("\(verb) start|stop \(verb == "record" ? "FILE" : "URL")")
            }
            if args[0] == "start" {
                let target = verb == "record" ? URL(fileURLWithPath: args[1]).path : args[1]
                try call("POST", "/v1/outputs", [verb: target])
            } else {
                let id = verb == "record" ? "record:" + URL(fileURLWithPath: args[1]).path : "push:" + args[1]
                var c = URLComponents()
                c.queryItems = [URLQueryItem(name: "id", value: id)]
                try call("DELETE", "/v1/outputs?" + (c.percentEncodedQuery ?? ""))
            }
        case "frame":
            guard let output else { throw ValidationError("frame needs -o FILE.png") }
            let q = size.map { "?size=\($0)" } ?? ""
            let data = try request("GET", "/v1/frame.png" + q, nil)
            try data.write(to: URL(fileURLWithPath: output))
            print("wrote \(output)")
        default:
            try streamEvents()
        }
    }

    /// A command-line value as JSON: numbers, true/false and [lists] as such, anything else as text.
    func jsonValue(_ s: String) -> Any {
        if let d = Double(s) { return d }
        if s == "true" || s == "false" { return s == "true" }
        if s.hasPrefix("["), let data = s.data(using: .utf8), let v = try? JSONSerialization.jsonObject(with: data) { return v }
        return s.replacingOccurrences(of: "\\n", with: "\n")
    }

    func call(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws {
        let data = try request(method, path, body)
        print(String(decoding: data, as: UTF8.self))
    }

    func request(_ method: String, _ path: String, _ body: [String: Any]?) throws -> Data {
        guard let url = URL(string: base + path) else { throw UserError("bad URL \(base + path)") }
        var req = URLRequest(url: url, timeoutInterval: 30)
        req.httpMethod = method
        if let t = token ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_CONTROL_TOKEN"] {
            req.setValue("Bearer \(t)", forHTTPHeaderField: "Authorization")
        }
        if let body {
            req.httpBody = try JSONSerialization.data(withJSONObject: body)
            req.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        final class Result: @unchecked Sendable { var data: Data?; var response: URLResponse?; var error: (any Error)? }
        let result = Result()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: req) { d, r, e in
            result.data = d
            result.response = r
            result.error = e
            done.signal()
        }.resume()
        done.wait()
        if let e = result.error {
            throw UserError("cannot reach pipcompose at \(base): \(e.localizedDescription); is it running with --control?")
        }
        let status = (result.response as? HTTPURLResponse)?.statusCode ?? 0
        let data = result.data ?? Data()
        guard (200..<300).contains(status) else {
            let message = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])
                .flatMap { ($0["error"] as? [String: Any])?["message"] as? String } ?? String(decoding: data, as: UTF8.self)
            throw UserError("refused (\(status)): \(message)")
        }
        return data
    }

    /// Prints each server-sent event as one JSON line until the server ends the stream or Ctrl-C.
    func streamEvents() throws {
        final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
            var pending = ""
            let done = DispatchSemaphore(value: 0)
            var status = 0
            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
                status = (response as? HTTPURLResponse)?.statusCode ?? 0
                if status == 200 { FileHandle.standardError.write(Data("listening for events\n".utf8)) }
                completionHandler(.allow)
            }
            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                pending += String(decoding: data, as: UTF8.self)
                while let r = pending.range(of: "\n\n") {
                    let block = pending[..<r.lowerBound]
                    pending = String(pending[r.upperBound...])
                    for line in block.split(separator: "\n") where line.hasPrefix("data: ") {
                        say(String(line.dropFirst(6)))
                    }
                }
            }
            func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                done.signal()
            }
        }
        guard let url = URL(string: base + "/v1/events") else { throw UserError("bad URL") }
        var req = URLRequest(url: url, timeoutInterval: 24 * 3600)
        if let t = token ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_CONTROL_TOKEN"] {
            req.setValue("Bearer \(t)", forHTTPHeaderField: "Authorization")
        }
        let delegate = Delegate()
        let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
        session.dataTask(with: req).resume()
        delegate.done.wait()
        if delegate.status != 200 { throw UserError("cannot read events from \(base) (status \(delegate.status))") }
    }
}
