/// A video layer: a file, a stream or a test pattern, decoded by GStreamer and drawn in its box.
public struct VideoConfig: WidgetConfig, Equatable {
    public var source: VideoSource = Keys.source.fallback
    /// `fit` letterboxes the whole picture into the box, `fill` covers the box (cropped), `center` keeps the
    /// input's own size, centered and clipped to the box. The first two scale in GStreamer, `center` does not.
    public var fit = ImageFit.fit
    /// A file starts again at its end.
    public var loop = true
    public var opacity = 1.0
    /// A picture (PNG, JPEG, SVG) shown instead of "no signal" while the input has no picture.
    public var fallback: String?

    public enum Keys {
        /// A file (relative to the scene's folder), a URI or `test[:PATTERN]`; a file must hold pictures.
        static let source = WidgetKey<VideoSource>(
            info: KeyInfo(name: "source", type: "file, URI or test:PATTERN", defaultValue: "", range:
                            VideoSource.schemes.map { $0 + "://" }.joined(separator: ", "),
                          doc: "what to show: a video file, a stream (rtsp://, srt://, http://…) or a test pattern",
                          live: true, required: true),
            fallback: .test(pattern: "smpte"),
            scene: { n, context throws(SceneError) in
                switch VideoConfig.checkSource(try n.string(), context) {
                case .success(let s): return s
                case .failure(let problem): throw n.error(problem.message)
                }
            },
            json: { v, context throws(ControlError) in
                switch VideoConfig.checkSource(try v.text("source"), context) {
                case .success(let s): return s
                case .failure(let problem): throw .unprocessable(problem.message)
                }
            })
        static let fit = WidgetKey.choice("fit", ImageFit.allCases.map { ($0.rawValue, $0) }, default: "fit",
                                          doc: "fit: letterboxed; fill: the box covered, cropped; center: its own "
                                          + "size, clipped")
        static let loop = WidgetKey.flag("loop", default: true, doc: "a file starts again at its end")
        static let opacity = WidgetKey.number("opacity", default: 1, range: 0...1, doc: "0: invisible, 1: opaque",
                                              live: true)
        static let fallback = WidgetKey.path("fallback", doc: "a picture shown while the input has no picture",
                                             picture: true)
    }

    public static let type = "video"
    public static let summary = "a video file, a stream or a test pattern, decoded live"
    public static let keys = [Keys.source.info, Keys.fit.info, Keys.loop.info, Keys.opacity.info, Keys.fallback.info]
    public static let placement = Placement(edge: .fill, minPixels: 16, priority: 0)
    public static var style: Style { .edgeToEdge }

    public init() {}

    public init(scene f: SceneFields) throws(SceneError) {
        source = try f.require(Keys.source, "video widget needs 'source': a file, a URI (rtsp://, srt://, "
                               + "http://, file://…) or test:PATTERN")
        fit = try f.read(Keys.fit)
        loop = try f.read(Keys.loop)
        opacity = try f.read(Keys.opacity)
        fallback = try f.value(Keys.fallback)
    }

    /// The same checks for a scene and a live update: the path taken from the scene's folder, a file that must
    /// hold pictures (a text or a sound file named by mistake is refused).
    static func checkSource(_ raw: String, _ context: SceneContext) -> Result<VideoSource, KeyProblem> {
        let source: VideoSource
        do { source = try VideoSource.parse(raw, directory: context.folder) } catch { return .failure(KeyProblem(error.description)) }
        if source.isFile, case .uri(let uri) = source, let problem = context.checks.videoProblem(uri) {
            return .failure(KeyProblem("'\(raw)' \(problem); a video layer needs a video file (MP4, MKV, WebM, TS…)"))
        }
        return .success(source)
    }

    /// Another source or opacity; what is nil stays.
    public struct Change: WidgetChange {
        public let source: VideoSource?
        public let opacity: Double?
    }

    public static func change(_ f: LiveFields) throws(ControlError) -> any WidgetChange {
        Change(source: try f.value(Keys.source), opacity: try f.value(Keys.opacity))
    }
}
