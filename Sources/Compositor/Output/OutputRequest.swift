import Foundation

/// The outputs asked for on a command line, before they are checked: `--rtsp`, its login, `--record` (with the
/// resize policy), `--push`, `--pipeline`. `specs()` checks them all and gives the outputs in order.
public struct OutputRequest: Sendable, Equatable {
    public var rtsp: String?
    public var rtspUser: String?
    public var rtspPassword: String?
    /// The PEM certificate and key an `rtsps://` server serves (`--tls-cert`, `--tls-key`).
    public var tlsCertificate: String?
    public var tlsKey: String?
    public var records: [String] = []
    public var recordResize = OutputSpec.ResizePolicy.fit
    public var pushes: [String] = []
    public var pipelines: [String] = []

    public init() {}

    /// Every output, checked; the first problem is thrown with what to do about it.
    public func specs() throws(OutputSpec.Invalid) -> [OutputSpec] { try entries().map(\.spec) }

    /// The rendition each output names with a trailing `@WxH` (`small.mp4@416x234`), by its index in `specs()`, with
    /// the output's text before the `@`.
    public func renditions() throws(OutputSpec.Invalid) -> [Int: (output: String, size: PixelSize)] {
        var byIndex: [Int: (output: String, size: PixelSize)] = [:]
        for (i, e) in try entries().enumerated() { if let r = e.rendition { byIndex[i] = (e.text, r) } }
        return byIndex
    }

    private func entries() throws(OutputSpec.Invalid) -> [(spec: OutputSpec, rendition: PixelSize?, text: String)] {
        // A user without a password logs in with watch links' tokens (`run` checks that there is a control port).
        if rtspUser == nil && rtspPassword != nil {
            throw OutputSpec.Invalid(description: "an RTSP password (--rtsp-password or PIPCOMPOSE_RTSP_PASSWORD) needs "
                                     + "--rtsp-user NAME: viewers log in as that user")
        }
        var entries: [(spec: OutputSpec, rendition: PixelSize?, text: String)] = []
        if rtsp != nil || rtspUser != nil {
            if let rtsp, Rendition.splitOutput(rtsp).rendition != nil {
                throw OutputSpec.Invalid(description: "--rtsp '\(rtsp)': the RTSP server serves every rendition by itself, "
                                         + "at PATH@WxH beside PATH; give --rtsp the main path")
            }
            var endpoint = try rtsp.map { text throws(OutputSpec.Invalid) in try RTSPEndpoint.parse(text) } ?? RTSPEndpoint()
            endpoint.user = rtspUser
            endpoint.password = rtspPassword
            if endpoint.secure {
                guard let certificate = tlsCertificate, let key = tlsKey else {
                    throw OutputSpec.Invalid(description: "--rtsp '\(rtsp ?? "")' serves RTSP over TLS: give the "
                                             + "certificate and its key with --tls-cert FILE --tls-key FILE (PEM)")
                }
                endpoint.tls = (certificate, key)
            }
            entries.append((.rtsp(endpoint), nil, rtsp ?? ""))
        }
        for r in records {
            let (path, rendition) = Rendition.splitOutput(r)
            entries.append((try OutputSpec.record(path, policy: recordResize), rendition, path))
        }
        for p in pushes {
            let (url, rendition) = Rendition.splitOutput(p)
            entries.append((try OutputSpec.push(url), rendition, url))
        }
        for p in pipelines {
            let (path, rendition) = Rendition.splitOutput(p)
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw OutputSpec.Invalid(description: "--pipeline '\(path)': no such readable file")
            }
            entries.append((.custom(path: path), rendition, path))
        }
        return entries
    }
}
