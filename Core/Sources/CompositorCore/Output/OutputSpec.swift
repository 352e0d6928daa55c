import Foundation

/// An output the user asked for, checked before anything starts.
public enum OutputSpec: Sendable, Equatable {
    public enum FileFormat: String, Sendable, CaseIterable {
        case mp4, mkv, ts

        /// Containers that cannot change picture size mid-file.
        public var fixedSize: Bool { self != .ts }
    }

    /// What a fixed-size recording does when the render size changes.
    public enum ResizePolicy: String, Sendable, CaseIterable {
        /// Keep the file's size; the re-laid window is letterboxed into it.
        case fit
        /// Close the file and start a new numbered one at the new size.
        case split
    }

    case rtsp(RTSPEndpoint)
    case record(path: String, format: FileFormat, policy: ResizePolicy)
    case push(url: String, scheme: String)
    case custom(path: String)
    /// One rung of an HLS ladder (`--hls DIR`): its media playlist and segments in `folder/rung/`.
    case hls(folder: String, rung: String)

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// `--record FILE`: the format comes from the extension; the folder must be writable.
    public static func record(_ path: String, policy: ResizePolicy) throws(Invalid) -> OutputSpec {
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        guard let format = FileFormat(rawValue: ext) else {
            throw Invalid(description: "cannot record to '\(path)': unknown extension '.\(ext)'; use .mp4, .mkv or .ts")
        }
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw Invalid(description: "cannot record to '\(path)': folder '\(dir)' does not exist; create it first")
        }
        guard FileManager.default.isWritableFile(atPath: dir) else {
            throw Invalid(description: "cannot record to '\(path)': folder '\(dir)' is not writable")
        }
        if FileManager.default.fileExists(atPath: path) && !FileManager.default.isWritableFile(atPath: path) {
            throw Invalid(description: "cannot record to '\(path)': the file exists and is not writable")
        }
        return .record(path: path, format: format, policy: policy)
    }

    /// `--push URL`: rtmp://, rtmps://, srt://, rtsp://, rtp:// (see `RTPTarget`) or whip+http(s):// (WebRTC to a
    /// WHIP server).
    public static func push(_ url: String) throws(Invalid) -> OutputSpec {
        guard let c = URLComponents(string: url), let scheme = c.scheme?.lowercased(),
              let host = c.host, !host.isEmpty else {
            throw Invalid(description: "cannot push to '\(url)': expected a URL like rtmp://HOST/app/key, "
                          + "srt://HOST:PORT, rtsp://HOST:PORT/path, rtp://HOST:PORT?audio=PORT or whip+http://HOST/PATH")
        }
        switch scheme {
        case "rtmp", "rtmps":
            // rtmp2sink needs both an application and a stream key: rtmp://host/app/key.
            guard c.path.split(separator: "/").count >= 2 else {
                throw Invalid(description: "cannot push to '\(url)': an RTMP URL needs an application and a "
                              + "stream key, like rtmp://\(host)/live/KEY")
            }
            return .push(url: url, scheme: "rtmp")
        case "srt":
            guard c.port != nil else { throw Invalid(description: "cannot push to '\(url)': srt:// needs a port") }
            return .push(url: url, scheme: "srt")
        case "rtsp", "rtsps": return .push(url: url, scheme: "rtsp")
        case "whip+http", "whip+https": return .push(url: url, scheme: "whip")
        case "rtp":
            _ = try RTPTarget.parse(url)
            return .push(url: url, scheme: "rtp")
        default:
            throw Invalid(description: "cannot push to '\(url)': unsupported scheme '\(scheme)'; use rtmp://, srt://, rtsp://, rtp:// or whip+http(s)://")
        }
    }
}

/// Where the embedded RTSP server listens and what it serves.
public struct RTSPEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var path: String
    public var user: String?
    public var password: String?
    /// RTSP over TLS (`--rtsp rtsps://…`): every connection is TLS, with this PEM certificate and key (the control
    /// port's `--tls-cert`, `--tls-key`).
    public var secure = false
    public var tls: (certificate: String, key: String)? {
        get { certificate.flatMap { c in key.map { (c, $0) } } }
        set { certificate = newValue?.certificate; key = newValue?.key }
    }
    private var certificate: String?
    private var key: String?

    public init(host: String = "127.0.0.1", port: Int = 8554, path: String = "/pip") {
        self.host = host
        self.port = port
        self.path = path
    }

    public var description: String { url }
    public var url: String {
        let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
        return (secure ? "rtsps" : "rtsp") + "://\(shownHost):\(port)\(path)"
    }

    /// Parses `[rtsp://|rtsps://][HOST:]PORT[/PATH]`; port 0 picks a free one; `rtsps://` serves over TLS.
    public static func parse(_ text: String) throws(OutputSpec.Invalid) -> RTSPEndpoint {
        var t = text
        var e = RTSPEndpoint()
        if t.hasPrefix("rtsp://") { t.removeFirst(7) }
        if t.hasPrefix("rtsps://") {
            t.removeFirst(8)
            e.secure = true
        }
        if let slash = t.firstIndex(of: "/") {
            e.path = String(t[slash...])
            t = String(t[..<slash])
        }
        let hostPort = t.split(separator: ":", omittingEmptySubsequences: false)
        let portText: Substring
        if hostPort.count == 2 {
            e.host = hostPort[0].isEmpty ? e.host : String(hostPort[0])
            portText = hostPort[1]
        } else if hostPort.count == 1 {
            portText = hostPort[0]
        } else {
            throw OutputSpec.Invalid(description: "invalid --rtsp '\(text)': expected [HOST:]PORT[/PATH], e.g. 8554/pip")
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw OutputSpec.Invalid(description: "invalid --rtsp '\(text)': port must be 0...65535, e.g. 8554/pip")
        }
        e.port = port
        guard e.path.count > 1, !e.path.contains(" ") else {
            throw OutputSpec.Invalid(description: "invalid --rtsp '\(text)': needs a path such as /pip")
        }
        return e
    }
}
