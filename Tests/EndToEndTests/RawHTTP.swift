import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 request written byte for byte to a loopback port, so that a test can send what a hostile client
/// sends (any `Host`, any `Origin`, no `Host` at all), which URLSession would not; returns the status (0: no answer)
/// and the response's head and body as text.
func rawHTTP(port: Int, _ head: String, body: String = "") -> (status: Int, text: String) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return (0, "socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return (0, "connect: \(String(cString: strerror(errno)))") }
    var request = head.replacingOccurrences(of: "\n", with: "\r\n")
    if !body.isEmpty { request += "Content-Length: \(body.utf8.count)\r\n" }
    request += "Connection: close\r\n\r\n" + body
    let bytes = Array(request.utf8)
    var sent = 0
    while sent < bytes.count {
        let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { return (0, "send: \(String(cString: strerror(errno)))") }
        sent += n
    }
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        answer += buffer[..<n]
    }
    let text = String(decoding: answer, as: UTF8.self)
    let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
    return (status, text)
}
