import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The addresses WebRTC's ICE offers to browsers. libnice leaves loopback out on its own, so a browser on the same
/// machine (or a CI sandbox with nothing but `lo`) could not connect; and on a control port bound to one address,
/// ICE should not advertise the others.
public enum LocalAddresses {
    public static func forICE(listeningOn host: String) -> [String] {
        switch host {
        case "127.0.0.1", "localhost", "::1": return ["127.0.0.1"]
        case "0.0.0.0", "::", "": return ["127.0.0.1"] + ipv4Interfaces().filter { $0 != "127.0.0.1" }
        default:
            // ICE takes numeric addresses only: a host name (or IPv6) listens where it resolves, so offer every
            // IPv4 interface rather than none.
            var a = in_addr()
            guard inet_pton(AF_INET, host, &a) == 1 else {
                return ["127.0.0.1"] + ipv4Interfaces().filter { $0 != "127.0.0.1" }
            }
            return ["127.0.0.1", host]
        }
    }

    /// Every IPv4 address of the machine's interfaces that are up.
    public static func ipv4Interfaces() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var out: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let addr = entry.pointee.ifa_addr, addr.pointee.sa_family == UInt16(AF_INET),
                  entry.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(addr, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0,
                           NI_NUMERICHOST) == 0 {
                out.append(String(cString: host))
            }
        }
        return Array(Set(out)).sorted()
    }
}
