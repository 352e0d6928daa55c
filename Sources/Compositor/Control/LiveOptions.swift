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

    public init(scene: Scene, size: PixelSize? = nil, fps: Int? = nil, outputs: [OutputSpec] = []) {
        self.scene = scene
        self.size = size ?? scene.size
        self.fps = fps ?? scene.fps
        self.outputs = outputs.isEmpty ? [.rtsp(RTSPEndpoint())] : outputs
    }
}
