import Foundation

/// How frames are encoded: which encoder chain (`pipelines/encode-*.pipeline`) and its rate settings.
public struct EncoderSettings: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case auto, x264, vaapi, nvenc

        /// The GStreamer element each hardware chain needs.
        var element: String? {
            switch self {
            case .x264: "x264enc"
            case .vaapi: "vaapih264enc"
            case .nvenc: "nvh264enc"
            case .auto: nil
            }
        }
    }

    public var kind: Kind = .x264
    /// x264 speed preset: ultrafast ... placebo.
    public var preset = "ultrafast"
    /// kbit/s; 0 picks one from the picture size (about 0.09 bit per pixel at 30 fps).
    public var bitrate = 0
    /// Frames between key frames; 0 = one a second.
    public var keyInterval = 0
    /// Encoder threads; 0 = automatic.
    public var threads = 0
    /// Pins the H.264 profile to constrained baseline, what every WebRTC browser decodes (x264's ultrafast is that
    /// already; slower presets would give High, which Chromium does not offer to receive).
    public var constrainedBaseline = false

    public init() {}

    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow",
                                 "slower", "veryslow", "placebo"]

    /// The chain that will run: `auto` takes the first hardware encoder GStreamer has, else x264 with a
    /// warning; an explicit hardware choice that is missing is an error.
    public func resolved(warn: (String) -> Void) throws -> Kind {
        switch kind {
        case .auto:
            for k in [Kind.vaapi, .nvenc] where Gst.hasElement(k.element!) { return k }
            warn("no hardware H.264 encoder found (looked for vaapih264enc, nvh264enc); using x264")
            return .x264
        default:
            guard Gst.hasElement(kind.element!) else {
                throw GstError(element: kind.element!, message: "encoder '\(kind.rawValue)' is not installed; "
                               + "use --encoder x264 or --encoder auto")
            }
            return kind
        }
    }

    func bitrate(for size: PixelSize, fps: Int) -> Int {
        if bitrate > 0 { return bitrate }
        let bits = Double(size.width * size.height) * Double(fps) * 0.09
        return max(300, Int(bits / 1000))
    }

    /// A rendition's bitrate: its own, or its size's default (never the main picture's `--bitrate`).
    func bitrate(forRendition r: Rendition, fps: Int) -> Int {
        var own = self
        own.bitrate = r.bitrateKbps ?? 0
        return own.bitrate(for: r.size, fps: fps)
    }

    func values(for kind: Kind, liveSize: PixelSize, fixed: PixelSize?, fps: Int) -> [String: String] {
        let size = fixed ?? liveSize
        var sizeCaps = ""
        if let fixed { sizeCaps = ",width=\(fixed.width),height=\(fixed.height),pixel-aspect-ratio=1/1" }
        return [
            "convert_threads": "2",
            "size_caps": sizeCaps,
            "preset": preset,
            "bitrate": String(bitrate(for: size, fps: fps)),
            "keyint": String(keyInterval > 0 ? keyInterval : fps),
            "threads": String(threads),
            "profile_caps": constrainedBaseline ? ",profile=constrained-baseline" : "",
        ]
    }
}
