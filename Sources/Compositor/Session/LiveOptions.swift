import Foundation

/// Everything `pipcompose run` was asked for, already checked.
public struct LiveOptions: Sendable {
    public var scene: Scene
    public var size: PixelSize
    public var fps: Int
    /// Outputs in the order given; with none, the default RTSP endpoint.
    public var outputs: [OutputSpec]
    public var encoder = EncoderSettings()
    /// Stop after this many seconds of frames.
    public var duration: Double?
    /// Impairments for testing a probe or a video system: frames left out before the encoder, and a fixed
    /// delay between the encoder and every output.
    public var injectDrops: DropPattern?
    public var injectDelayMs: Double = 0
    /// The audio track (none: the stream is silent), and a known shift of the sound against the picture.
    public var audio = AudioChoice.none
    public var injectAVOffsetMs: Double = 0
    /// The sound's codec in MKV recordings (every other container carries AAC).
    public var mkvAudioCodec = AudioCodec.aac
    /// Browsers as viewers over WHEP on the control port (`--webrtc`); nil: off.
    public var webrtc: WebRTCSettings?
    /// Web widgets' pages: the most memory each page's processes may use together (`--web-memory-limit`).
    public var web = WebSettings()
    /// More pictures of the scene, each drawn with its own layout and encoded on its own (`--rendition`).
    public var renditions: [Rendition] = []
    /// The rendition each output carries, by its index in `outputs` (`small.mp4@416x234`); absent: the main picture.
    public var outputRenditions: [Int: PixelSize] = [:]
    /// An HLS ladder of the main picture and every rendition (`--hls DIR`); nil: none.
    public var hls: HLSSettings?

    public init(scene: Scene, size: PixelSize? = nil, fps: Int? = nil, outputs: [OutputSpec] = []) {
        self.scene = scene
        self.size = size ?? scene.size
        self.fps = fps ?? scene.fps
        self.outputs = outputs.isEmpty ? [.rtsp(RTSPEndpoint())] : outputs
    }

    /// The `rtp://` pushes asked for when the run starts (they pin the encoder's profile and its Opus).
    public var rtpPushes: [RTPTarget] {
        outputs.compactMap { if case .push(let url, "rtp") = $0 { try? RTPTarget.parse(url) } else { nil } }
    }

    /// STUN/TURN for WHIP pushes when the run has no WebRTC viewers (with them, `webrtc.ice` serves both).
    public var whipIce = IceSettings()

    /// A push to a WHIP server among the outputs (its sound is Opus).
    public var pushesWHIP: Bool { outputs.contains { if case .push(_, "whip") = $0 { true } else { false } } }
}

/// `run --webrtc`: how many browsers may watch at once, and where ICE may be reached.
public struct WebRTCSettings: Sendable, Equatable {
    public var maxViewers = 64
    /// The local addresses ICE offers: loopback, and the control API's address when it is not loopback (every
    /// IPv4 interface when it listens on all). Empty: every interface, as libnice picks them.
    public var addresses: [String] = ["127.0.0.1"]
    /// A viewer that has not connected this long after its answer is dropped (and counted).
    public var connectTimeout: Double = 15
    /// Renditions made at once for browsers that follow their windows (beyond `--rendition`'s); past it a window
    /// sees the nearest picture there is. 0: none are made.
    public var maxRenditions = 4
    /// STUN, TURN and a 1:1 NAT's public address (`--ice-server`, `--turn-secret`, `--ice-public-ip`).
    public var ice = IceSettings()

    public init(maxViewers: Int = 64, addresses: [String] = ["127.0.0.1"]) {
        self.maxViewers = maxViewers
        self.addresses = addresses
    }
}

/// How web widgets' pages run.
public struct WebSettings: Sendable, Equatable {
    /// Bytes of resident memory a page's processes (its renderer, WebKit's web and network processes) may use
    /// together before the page is taken down and started again.
    public var memoryLimit = 1024 << 20
    /// Bytes a page's processes may grow by, over what they used once the page had settled, before a new launch of
    /// the page is started beside them and takes their place once it has drawn (`--web-renew-growth`); 0: never.
    public var renewGrowth = 4 << 20
    /// A page that has not finished loading this long is taken down and started again (`--web-load-timeout`).
    public var loadTimeout = 30.0
    /// The pipcompose binary a page runs in (`pipcompose web-page`); nil: this process's own.
    public var executable: String?
    /// Pages on the scene's clock (`pipcompose render`), stepped a frame at a time: the Unix milliseconds their `Date`
    /// shows at scene time 0. Nil: pages run on the wall clock, as in a run.
    public var sceneClockStart: Int64?

    public init() {}

    /// The binary pages run in: `PIPCOMPOSE_BINARY` when set (a process that is not pipcompose itself, such as
    /// the test runner), else this one.
    public var resolvedExecutable: String {
        if let executable { return executable }
        if let env = ProcessInfo.processInfo.environment["PIPCOMPOSE_BINARY"], !env.isEmpty { return env }
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
