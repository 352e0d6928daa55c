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

    public init(scene: Scene, size: PixelSize? = nil, fps: Int? = nil, outputs: [OutputSpec] = []) {
        self.scene = scene
        self.size = size ?? scene.size
        self.fps = fps ?? scene.fps
        self.outputs = outputs.isEmpty ? [.rtsp(RTSPEndpoint())] : outputs
    }
}
