import Foundation
import Testing
@testable import CompositorCore

/// Trickle ICE fragments (RFC 8840) as a WHEP client writes them and a server reads them.
@Suite struct TrickleFragmentTests {
    static let rfcExample = """
        a=ice-ufrag:EsAw\r
        a=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r
        m=audio 9 RTP/AVP 0\r
        a=mid:0\r
        a=candidate:1387637174 1 udp 2122260223 192.0.2.1 61764 typ host generation 0 ufrag EsAw network-id 1\r
        a=candidate:3471623853 1 udp 2122194687 198.51.100.2 61765 typ host generation 0 ufrag EsAw network-id 2\r
        a=end-of-candidates\r

        """

    @Test func theRFCsExampleGivesTwoCandidatesOfMidZeroAndTheEnd() throws {
        let f = try TrickleFragment.parse(Self.rfcExample)
        #expect(f.ufrag == "EsAw" && f.pwd == "P2uYro0UCOQ4zxjKXaWCBui1" && f.ended)
        #expect(f.candidates.count == 2)
        #expect(f.candidates.allSatisfy { $0.mid == "0" && $0.index == 0 })
        #expect(f.candidates[1].line.hasPrefix("candidate:3471623853 1 udp 2122194687 198.51.100.2 61765 typ host"))
    }

    @Test func whatIsWrittenIsReadBackUnderEachSection() throws {
        let offer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=ice-ufrag:u1\r\na=ice-pwd:p1\r\na=mid:video0\r\n"
            + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:audio1\r\n"
        let (sections, ufrag, pwd) = TrickleFragment.sections(of: offer)
        #expect(sections.map(\.mid) == ["video0", "audio1"] && ufrag == "u1" && pwd == "p1")
        let out = TrickleFragment(ufrag: ufrag, pwd: pwd, candidates: [
            .init(mid: nil, index: 1, line: "candidate:1 1 UDP 2015363327 10.0.0.2 40000 typ host"),
        ])
        let text = out.text(sections: sections)
        // Only the section that has a candidate (none has ended yet).
        #expect(!text.contains("m=video") && text.contains("m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:audio1\r\n"))
        let back = try TrickleFragment.parse(text)
        #expect(back.candidates == [.init(mid: "audio1", index: 0, line: out.candidates[0].line)] && !back.ended)
        // The end is said in every section.
        let end = TrickleFragment(ufrag: ufrag, pwd: pwd, ended: true).text(sections: sections)
        let endRead = try TrickleFragment.parse(end)
        #expect(end.components(separatedBy: "a=end-of-candidates").count == 3 && endRead.ended)
    }

    @Test func junkAndOrphanCandidatesAreRefusedWithTheLine() {
        #expect(throws: TrickleFragment.Refused.self) { try TrickleFragment.parse("hello world\r\n") }
        do {
            _ = try TrickleFragment.parse("a=ice-ufrag:x\r\na=candidate:1 1 udp 1 10.0.0.1 1 typ host\r\n")
            Issue.record("a candidate with no media section was taken")
        } catch { #expect(error.description.contains("line 2")) }
    }
}
