import Hummingbird
import NIOCore

/// A control request's context: what the access check let it do (`AccessMiddleware` sets it before any route), and
/// where it came from (the HLS players counted per watch link).
public struct ControlContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Drive (the control token), or watch through one watch link.
    public var capability: ControlAccess.Capability = .drive
    /// Whether the token came in the path (`/hls/TOKEN/…`), which the HLS route then leaves out.
    public var tokenInPath = false
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The watch link the request came through; nil when it drives.
    public var link: String? {
        if case .watch(let id) = capability { return id }
        return nil
    }
}
