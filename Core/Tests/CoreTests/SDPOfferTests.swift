import Foundation
import Testing
@testable import CompositorCore

/// WHEP offers read before anything is built: Chromium's real offer, and the ways an offer can be refused.
@Suite struct SDPOfferTests {
    static let chromium = URL(fileURLWithPath: repositoryRoot).appendingPathComponent("Tests/Fixtures/chromium-156-offer.sdp")

    @Test func chromiumsOfferGivesItsConstrainedBaselinePayloadType() throws {
        let offer = try SDPOffer.parse(try String(contentsOf: Self.chromium, encoding: .utf8))
        #expect(offer.videoDirection == "recvonly" && offer.otherMedia.isEmpty)
        #expect(offer.videoCodecs.first?.name == "VP8" && offer.videoCodecs.contains { $0.name == "AV1" })
        let h264 = try offer.h264()
        // 102 is 42001f (Baseline), 108 is 42e01f (constrained baseline), both packetization-mode 1.
        #expect(h264.payloadType == 108 && h264.parameters["profile-level-id"] == "42e01f", "\(h264)")
    }

    func offer(_ video: String, direction: String = "recvonly", audio: Bool = false) -> String {
        var s = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
        if audio { s += "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\na=recvonly\r\n" }
        s += video + "a=\(direction)\r\n"
        return s
    }

    @Test func theBestH264IsChosenAndOtherSectionsAreNoted() throws {
        let main = offer("""
        m=video 9 UDP/TLS/RTP/SAVPF 96 100 101\r
        a=rtpmap:96 VP8/90000\r
        a=rtpmap:100 H264/90000\r
        a=fmtp:100 packetization-mode=0;profile-level-id=42e01f\r
        a=rtpmap:101 H264/90000\r
        a=fmtp:101 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=4d001f\r

        """, audio: true)
        let o = try SDPOffer.parse(main)
        #expect(try o.h264().payloadType == 101)
        #expect(o.opus?.payloadType == 111 && o.otherMedia.isEmpty, "\(o)")
    }

    @Test func anOfferWithoutH264GetsVP8AndOneWithNeitherIsRefused() throws {
        let vp8 = try SDPOffer.parse(offer("m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\na=rtpmap:96 VP8/90000\r\na=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n"))
        #expect(try vp8.choice() == .vp8(vp8.videoCodecs[0]))
        let both = try SDPOffer.parse(try String(contentsOf: Self.chromium, encoding: .utf8))
        #expect(try both.choice().payloadType == 108)
        let av1 = try SDPOffer.parse(offer("m=video 9 UDP/TLS/RTP/SAVPF 45\r\na=rtpmap:45 AV1/90000\r\n"))
        #expect(throws: SDPOffer.Refused.self) { try av1.choice() }
    }

    @Test func badOffersAreRefusedSayingWhatToDo() throws {
        func refusal(_ text: String) -> String {
            do { _ = try SDPOffer.parse(text).h264(); return "" } catch { return error.description }
        }
        #expect(refusal("hello").contains("not an SDP offer"))
        #expect(refusal("{\"sdp\": \"v=0\"}").contains("not an SDP offer"))
        #expect(refusal("v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n").contains("no video section"))
        let vp8 = refusal(offer("m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\na=rtpmap:96 VP8/90000\r\na=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n"))
        #expect(vp8.contains("the offer has VP8;") && vp8.contains("H.264 with packetization-mode=1"), "\(vp8)")
        let mode0 = refusal(offer("m=video 9 UDP/TLS/RTP/SAVPF 100\r\na=rtpmap:100 H264/90000\r\na=fmtp:100 packetization-mode=0\r\n"))
        #expect(mode0.contains("the offer has H264;"), "\(mode0)")
        let send = refusal(offer("m=video 9 UDP/TLS/RTP/SAVPF 100\r\na=rtpmap:100 H264/90000\r\na=fmtp:100 packetization-mode=1\r\n",
                                 direction: "sendonly"))
        #expect(send.contains("use recvonly"), "\(send)")
    }
}
