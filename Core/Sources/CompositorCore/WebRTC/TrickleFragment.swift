import Foundation

/// Trickle ICE over HTTP (RFC 8840's `application/trickle-ice-sdpfrag`, as WHIP and WHEP send it in a `PATCH` on the
/// session): candidates found after the offer went out, each under the media section it belongs to, with the ICE
/// credentials they go with and, at the end, `a=end-of-candidates`.
///
/// ```
/// a=ice-ufrag:EsAw
/// a=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1
/// m=video 9 UDP/TLS/RTP/SAVPF 0
/// a=mid:video0
/// a=candidate:1387637174 1 udp 2122260223 192.0.2.1 61764 typ host
/// a=end-of-candidates
/// ```
public struct TrickleFragment: Sendable, Equatable {
    public struct Candidate: Sendable, Equatable {
        /// The media section's `a=mid`, or nil where the fragment gave none (then `index` places it).
        public var mid: String?
        /// Its media section's place among the fragment's `m=` lines.
        public var index: Int
        /// The attribute's value: `candidate:1387637174 1 udp …` (what webrtcbin's `add-ice-candidate` takes).
        public var line: String

        public init(mid: String?, index: Int, line: String) {
            self.mid = mid
            self.index = index
            self.line = line
        }
    }

    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    public var ufrag: String?
    public var pwd: String?
    public var candidates: [Candidate]
    public var ended: Bool

    public init(ufrag: String? = nil, pwd: String? = nil, candidates: [Candidate] = [], ended: Bool = false) {
        self.ufrag = ufrag
        self.pwd = pwd
        self.candidates = candidates
        self.ended = ended
    }

    /// Reads a fragment; refuses lines that are not SDP, and candidates before any `m=` line.
    public static func parse(_ text: String) throws(Refused) -> TrickleFragment {
        var out = TrickleFragment()
        var section = -1
        var mid: String?
        var pending: [(Int, String)] = []
        var mids: [Int: String] = [:]
        for (n, raw) in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            guard line.count > 2, line.dropFirst().first == "=" else {
                throw Refused(description: "line \(n + 1) is not SDP (`x=value`): \(line.prefix(80))")
            }
            if line.hasPrefix("m=") {
                section += 1
                mid = nil
            } else if line.hasPrefix("a=mid:") {
                mid = String(line.dropFirst(6))
                if section >= 0, let mid { mids[section] = mid }
            } else if line.hasPrefix("a=ice-ufrag:") {
                out.ufrag = String(line.dropFirst(12))
            } else if line.hasPrefix("a=ice-pwd:") {
                out.pwd = String(line.dropFirst(10))
            } else if line.hasPrefix("a=candidate:") {
                guard section >= 0 else {
                    throw Refused(description: "line \(n + 1): a candidate before any m= line (its media section is not known)")
                }
                pending.append((section, String(line.dropFirst(2))))
            } else if line == "a=end-of-candidates" {
                out.ended = true
            }
        }
        out.candidates = pending.map { Candidate(mid: mids[$0.0], index: $0.0, line: $0.1) }
        return out
    }

    /// The fragment's text, for a `PATCH`: the credentials, then each media section of `sections` (its `m=` line and
    /// `a=mid`, as the offer had them) with its candidates, and `a=end-of-candidates` in each when `ended`.
    public func text(sections: [(mLine: String, mid: String?)]) -> String {
        var lines: [String] = []
        if let ufrag { lines.append("a=ice-ufrag:\(ufrag)") }
        if let pwd { lines.append("a=ice-pwd:\(pwd)") }
        for (i, s) in sections.enumerated() {
            let mine = candidates.filter { $0.index == i }
            guard !mine.isEmpty || ended else { continue }
            lines.append(s.mLine)
            if let mid = s.mid { lines.append("a=mid:\(mid)") }
            lines += mine.map { "a=\($0.line)" }
            if ended { lines.append("a=end-of-candidates") }
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// An SDP's media sections (`m=` lines with their `a=mid`) and its ICE credentials (the first found), as a
    /// fragment of candidates for it is written and read.
    public static func sections(of sdp: String) -> (sections: [(mLine: String, mid: String?)], ufrag: String?, pwd: String?) {
        var sections: [(mLine: String, mid: String?)] = []
        var ufrag: String?, pwd: String?
        for raw in sdp.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("m=") {
                sections.append((line, nil))
            } else if line.hasPrefix("a=mid:"), !sections.isEmpty, sections[sections.count - 1].mid == nil {
                sections[sections.count - 1].mid = String(line.dropFirst(6))
            } else if line.hasPrefix("a=ice-ufrag:"), ufrag == nil {
                ufrag = String(line.dropFirst(12))
            } else if line.hasPrefix("a=ice-pwd:"), pwd == nil {
                pwd = String(line.dropFirst(10))
            }
        }
        return (sections, ufrag, pwd)
    }
}
