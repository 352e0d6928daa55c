import Testing
@testable import CompositorCore

/// `--push rtp://…`: what is taken and what is refused before anything starts.
@Suite struct RTPTargetTests {
    @Test func takesAVideoPortAndAnAudioPortWithTheDefaultPayloadTypes() throws {
        let t = try RTPTarget.parse("rtp://127.0.0.1:5004?audio=5006")
        #expect(t == RTPTarget(host: "127.0.0.1", videoPort: 5004, audioPort: 5006, videoPayloadType: 96, audioPayloadType: 111))
        let v = try RTPTarget.parse("rtp://janus.example:6000/?pt=100&audio_pt=101")
        #expect(v.audioPort == nil && v.videoPayloadType == 100 && v.audioPayloadType == 101)
        guard case .push(_, "rtp") = try OutputSpec.push("rtp://239.1.2.3:5004") else {
            Issue.record("a multicast group is a place to push to")
            return
        }
    }

    @Test func refusesWhatNoReceiverCouldBeToldAndSaysWhatToWrite() {
        let bad: [(String, String)] = [
            ("rtp://127.0.0.1", "needs the video port"),
            ("rtp://127.0.0.1:0", "video port must be 1...65534"),
            ("rtp://127.0.0.1:65535", "its RTCP goes to the next"),
            ("rtp://127.0.0.1:5004?audio=5004", "must differ from the video port"),
            ("rtp://127.0.0.1:5004?audio=5005", "RTCP takes the port after it"),
            ("rtp://127.0.0.1:5004?audio=5003", "RTCP takes the port after it"),
            ("rtp://127.0.0.1:5004?audio=70000", "audio port must be 1...65534"),
            ("rtp://127.0.0.1:5004?audio=x", "'audio' needs a number"),
            ("rtp://127.0.0.1:5004?pt=8", "dynamic payload type"),
            ("rtp://127.0.0.1:5004?audio=5006&pt=111", "payload types must differ"),
            ("rtp://127.0.0.1:5004?video=5004", "unknown option 'video'"),
            ("rtp://127.0.0.1:5004/live", "no path"),
            ("rtp://u:p@127.0.0.1:5004", "no user or password"),
        ]
        for (url, why) in bad {
            do {
                _ = try OutputSpec.push(url)
                Issue.record("\(url) was taken")
            } catch {
                #expect(error.description.contains(why), "\(url): \(error.description)")
                #expect(error.description.contains("e.g. rtp://"), "\(url): \(error.description)")
            }
        }
    }

    @Test func twoPushesToOnePortOfOneHostOverlap() throws {
        let a = try RTPTarget.parse("rtp://127.0.0.1:5004?audio=5006")
        #expect(a.overlaps(try RTPTarget.parse("rtp://127.0.0.1:5006")))
        // Another push's RTP on this one's RTCP port.
        #expect(a.overlaps(try RTPTarget.parse("rtp://127.0.0.1:5005")))
        #expect(a.overlaps(try RTPTarget.parse("rtp://127.0.0.1:5008?audio=5004")))
        #expect(!a.overlaps(try RTPTarget.parse("rtp://127.0.0.1:5008?audio=5010")))
        #expect(a.overlaps(try RTPTarget.parse("rtp://127.0.0.1:5003?audio=5010")))
        #expect(!a.overlaps(try RTPTarget.parse("rtp://127.0.0.2:5004?audio=5006")))
    }
}
