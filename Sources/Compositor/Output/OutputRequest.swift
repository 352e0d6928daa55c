import Foundation

/// The outputs asked for on a command line, before they are checked: `--rtsp`, its login, `--record` (with the
/// resize policy), `--push`, `--pipeline`. `specs()` checks them all and gives the outputs in order.
public struct OutputRequest: Sendable, Equatable {
    public var rtsp: String?
    public var rtspUser: String?
    public var rtspPassword: String?
    public var records: [String] = []
    public var recordResize = OutputSpec.ResizePolicy.fit
    public var pushes: [String] = []
    public var pipelines: [String] = []

    public init() {}

    /// Every output, checked; the first problem is thrown with what to do about it.
    public func specs() throws(OutputSpec.Invalid) -> [OutputSpec] {
        if (rtspUser == nil) != (rtspPassword == nil) {
            throw OutputSpec.Invalid(description: "--rtsp-user and a password (--rtsp-password or PIPCOMPOSE_RTSP_PASSWORD) "
                                     + "go together")
        }
        var specs: [OutputSpec] = []
        if rtsp != nil || rtspUser != nil {
            var endpoint = try rtsp.map { text throws(OutputSpec.Invalid) in try RTSPEndpoint.parse(text) } ?? RTSPEndpoint()
            endpoint.user = rtspUser
            endpoint.password = rtspPassword
            specs.append(.rtsp(endpoint))
        }
        for r in records { specs.append(try OutputSpec.record(r, policy: recordResize)) }
        for p in pushes { specs.append(try OutputSpec.push(p)) }
        for p in pipelines {
            guard FileManager.default.isReadableFile(atPath: p) else {
                throw OutputSpec.Invalid(description: "--pipeline '\(p)': no such readable file")
            }
            specs.append(.custom(path: p))
        }
        return specs
    }
}
