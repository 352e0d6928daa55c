import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A port for a server a test starts itself (nginx, an ffmpeg or probe listener) that cannot bind port 0 and
/// say which port it got.
///
/// Asking the kernel for a free port (bind to 0, read it, close) races: the kernel hands out the same
/// ephemeral range to every client socket, and the port can be taken again before the server binds it. So
/// these ports come from below the ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`), which the
/// kernel never picks by itself; each is handed out once in this test process, and only after a bind shows
/// nothing else holds it.
func freePort(udp: Bool = false) -> Int {
    PortPool.shared.next(udp: udp)
}

/// An RTP receiver's two ports: the even one returned for RTP, the next for its RTCP.
func freeRTPPorts() -> Int {
    PortPool.shared.nextPair()
}

/// `@unchecked Sendable`: `handedOut` is behind `lock`.
final class PortPool: @unchecked Sendable {
    static let shared = PortPool()
    private let lock = NSLock()
    private var handedOut = Set<Int>()
    private let range: ClosedRange<Int>

    init() {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let low = text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        // Below the ephemeral range, above the well-known and common service ports.
        range = 20000...max(20001, min(low - 1, 32767))
    }

    /// An even port whose next one is free too: an RTP receiver's pair (RTP, RTCP).
    func nextPair() -> Int {
        lock.withLock {
            while true {
                let port = Int.random(in: range.lowerBound / 2...(range.upperBound - 1) / 2) * 2
                if handedOut.contains(port) || handedOut.contains(port + 1) { continue }
                handedOut.formUnion([port, port + 1])
                if [port, port + 1].allSatisfy({ Self.isFree($0, udp: false) && Self.isFree($0, udp: true) }) { return port }
            }
        }
    }

    func next(udp: Bool) -> Int {
        lock.withLock {
            while true {
                let port = Int.random(in: range)
                if handedOut.contains(port) { continue }
                handedOut.insert(port)
                if Self.isFree(port, udp: false) && Self.isFree(port, udp: true) { return port }
            }
        }
    }

    static func isFree(_ port: Int, udp: Bool) -> Bool {
        onLoopback(port, udp: udp) { fd, addr, size in bind(fd, addr, size) == 0 }
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is taken (a server there is listening).
    static func answers(_ port: Int) -> Bool {
        onLoopback(port, udp: false) { fd, addr, size in connect(fd, addr, size) == 0 }
    }

    /// `body` with a new socket and the address 127.0.0.1:`port`; the socket is closed after.
    private static func onLoopback(_ port: Int, udp: Bool,
                                   _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool) -> Bool {
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
