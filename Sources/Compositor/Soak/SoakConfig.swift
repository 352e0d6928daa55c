import Foundation

/// What `pipcompose soak` runs: N live streams in this process, each with a timecode strip, served over RTSP,
/// and M probes spread over them (viewer j watches stream j mod N).
public struct SoakConfig: Sendable {
    public static let maxStreams = 64
    public static let maxViewers = 256

    public var streams: Int
    public var viewers: Int
    public var size: PixelSize
    public var fps: Int
    public var duration: Double
    public var transport: Probe.Transport = .tcp
    /// Where soak.json and soak.html go.
    public var reportDirectory: String
    /// Samples put in soak.json and the charts: the newest this many (all of them, samples.jsonl, stay on disk).
    public var keepSamples = 86_400
    /// Each viewer compares one picture in this many with the scene's render (cost stays small with many
    /// viewers; a corruption that lasts shows within a second at the default of one picture a second at 30 fps).
    /// The first comparison is a period after a viewer joined.
    public var compareEvery = 30
    /// Streams carry the ticks (`--audio ticks`) and viewers decode the sound and place them: A/V offset charted.
    public var av = false
    /// Viewers of streams that exist elsewhere (`--viewers-only URL`, repeatable): no stream is run here, viewer j
    /// watches URL j mod count. Many machines can load one system this way.
    public var viewersOf: [String] = []
    /// With `viewersOf`: the scene those streams draw, for picture fidelity (none: no comparison).
    public var reference: Scene?
    /// Where the figures are served while the soak runs (`--metrics`).
    public var metrics: ProbeMetrics?
    /// WHEP viewers' token and STUN/TURN servers (`--viewers-only whep+http://…`).
    public var webrtc = WHEPClient.Options()
    /// How many viewers decode (`--decode K`); nil: all. Only WHEP viewers can do without: the others account for
    /// every frame by its RTP timestamp and read no picture.
    public var decode: Int?
    public var decodingViewers: Int { min(viewers, decode ?? viewers) }
    /// Fewer decode than watch: all account for frames, `decodingViewers` at a time decode too, in turn.
    public var rotatesSample: Bool { decodingViewers < viewers }
    /// How long each turn of the sample lasts (`--rotate-every`), seconds.
    public var rotateEvery: Double = 10

    /// Only viewers, of streams elsewhere.
    public var viewersOnly: Bool { !viewersOf.isEmpty }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(streams: Int, viewers: Int, size: PixelSize, fps: Int, duration: Double, reportDirectory: String) {
        self.streams = streams
        self.viewers = viewers
        self.size = size
        self.fps = fps
        self.duration = duration
        self.reportDirectory = reportDirectory
    }

    /// Refuses what cannot run, naming the limit.
    public func validate() throws(Invalid) {
        if viewersOnly {
            guard (1...Self.maxViewers).contains(viewers) else {
                throw Invalid(description: "--viewers must be 1...\(Self.maxViewers) with --viewers-only, got \(viewers)")
            }
            for u in viewersOf where URLComponents(string: u)?.scheme.map({ ["rtsp", "rtsps", "whep+http", "whep+https"].contains($0.lowercased()) }) != true {
                throw Invalid(description: "--viewers-only takes rtsp:// or whep+http(s):// URLs (a stream to watch), got '\(u)'")
            }
            if av && viewersOf.contains(where: { $0.lowercased().hasPrefix("whep+") }) {
                throw Invalid(description: "--av is not taken by a WHEP swarm (its viewers decode no sound); measure the A/V offset with probe whep+… --av, or soak RTSP viewers")
            }
            if let decode {
                guard (0...viewers).contains(decode) else {
                    throw Invalid(description: "--decode must be 0...\(viewers) (of --viewers), got \(decode)")
                }
                guard rotateEvery >= 1 && rotateEvery.isFinite else {
                    throw Invalid(description: "--rotate-every must be 1 second or more, got \(rotateEvery)")
                }
                if decode < viewers && !viewersOf.allSatisfy({ $0.lowercased().hasPrefix("whep+") }) {
                    throw Invalid(description: "--decode below --viewers needs whep+http(s):// streams: only WHEP viewers "
                                  + "count frames without decoding them")
                }
            }
        } else if decode != nil {
            throw Invalid(description: "--decode goes with --viewers-only whep+http://…: the soak's own viewers all decode")
        } else if reference != nil {
            throw Invalid(description: "--reference goes with --viewers-only: the soak's own streams are compared with their own scenes")
        }
        guard viewersOnly || (1...Self.maxStreams).contains(streams) else {
            throw Invalid(description: "--streams must be 1...\(Self.maxStreams) (each stream is a renderer and an "
                          + "encoder in this process), got \(streams)")
        }
        guard (0...Self.maxViewers).contains(viewers) else {
            throw Invalid(description: "--viewers must be 0...\(Self.maxViewers) (each viewer decodes every frame in "
                          + "this process; for more plain RTSP clients use bench/rtsp_burst.py), got \(viewers)")
        }
        guard (1...120).contains(fps) else { throw Invalid(description: "--fps must be 1...120, got \(fps)") }
        guard duration > 0 && duration <= 7 * 86_400 else {
            throw Invalid(description: "--duration must be more than 0 and at most a week (604800 s), got \(duration)")
        }
        guard size.width >= 114 else {
            throw Invalid(description: "--size must be at least 114 pixels wide for the timecode strip's 57 cells")
        }
    }

    /// Creates the report folder and checks a file can be written there, before anything starts.
    public func prepareReportDirectory() throws(Invalid) {
        let fm = FileManager.default
        do { try fm.createDirectory(atPath: reportDirectory, withIntermediateDirectories: true) } catch {
            throw Invalid(description: "cannot create the report folder \(reportDirectory): \(error.localizedDescription)")
        }
        let probe = reportDirectory + "/.pipcompose-write-test"
        guard fm.createFile(atPath: probe, contents: Data(repeating: 0, count: 64 * 1024)) else {
            throw Invalid(description: "cannot write in \(reportDirectory) (read-only or full?); choose another --report")
        }
        try? fm.removeItem(atPath: probe)
    }

    /// The scene of stream `i`: the strip, its name and a clock. Nothing in it depends on more than the frame
    /// number and the time, so every viewer's picture can be checked against a render of the same frame.
    public func scene(_ i: Int) throws -> Scene {
        try SceneLoader.parse("""
        title: soak stream \(i)
        size: \(size.width)x\(size.height)
        fps: \(fps)
        background: "#1a1a1a"
        widgets:
          - id: strip
            type: timecode
            place: {edge: top, size: 0.12}
          - id: name
            type: text
            text: "stream \(i)"
            place: {edge: bottom, size: 0.2}
          - id: clock
            type: clock
            format: "HH:mm:ss.SSS"
            timezone: UTC
            place: fill
        """, file: "soak-stream-\(i).yaml")
    }
}
