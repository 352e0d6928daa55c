import Testing
@testable import CompositorCore

/// Every change to what runs is a function from one topology to the next: checked here without GStreamer.
@Suite struct TopologyTests {
    let hd = PixelSize(width: 1280, height: 720)
    let small = PixelSize(width: 480, height: 270)
    let square = PixelSize(width: 400, height: 400)

    func record(_ path: String, _ format: OutputSpec.FileFormat = .mp4, _ policy: OutputSpec.ResizePolicy = .fit) -> Topology.Output {
        Topology.Output(id: "record:\(path)", spec: .record(path: path, format: format, policy: policy), location: path)
    }

    @Test func addingAFixedSizeFileTakesTheSizeOfNowAndTheLiveEncoder() throws {
        var t = Topology(size: hd)
        t = try t.adding(record("/r/a.mp4"))
        t = try t.adding(record("/r/b.ts", .ts))
        #expect(t.output("record:/r/a.mp4")?.fileSize == hd)
        #expect(t.output("record:/r/a.mp4")?.feed == .live)
        #expect(t.output("record:/r/b.ts")?.fileSize == nil)
    }

    @Test func theSameOutputTwiceIsAConflict() throws {
        let t = try Topology(size: hd).adding(record("/r/a.mp4"))
        #expect(throws: Topology.Refusal.alreadyRunning("record:/r/a.mp4 is already running")) {
            try t.adding(record("/r/a.mp4"))
        }
        #expect(throws: Topology.Refusal.self) { try t.removing("record:/r/none.mp4") }
    }

    @Test func aFitFileMovesToAnEncoderOfItsSizeAndBackWhenTheSizeReturns() throws {
        let t0 = try Topology(size: hd).adding(record("/r/a.mp4")).adding(record("/r/b.ts", .ts))
        let (t1, s1) = t0.resized(to: small)
        #expect(s1 == [.startEncoder(hd), .switchFeed(output: "record:/r/a.mp4", to: .fixed(hd))])
        #expect(t1.fixedEncoders == [hd])
        #expect(t1.output("record:/r/b.ts")?.feed == .live)

        // Another size: the fixed encoder stays, nothing switches.
        let (t2, s2) = t1.resized(to: square)
        #expect(s2.isEmpty)
        #expect(t2.size == square)

        // Back to the file's size: the file returns to the live encoder, the fixed one is retired.
        let (t3, s3) = t2.resized(to: hd)
        #expect(s3 == [.switchFeed(output: "record:/r/a.mp4", to: .live), .retireEncoder(hd)])
        #expect(t3.fixedEncoders.isEmpty)
        #expect(t3.output("record:/r/a.mp4")?.fileSize == hd)
    }

    @Test func twoFitFilesOfTheSameSizeShareOneEncoder() throws {
        let t0 = try Topology(size: hd).adding(record("/r/a.mp4")).adding(record("/r/b.mkv", .mkv))
        let (t1, s1) = t0.resized(to: small)
        #expect(s1.filter { $0 == .startEncoder(hd) }.count == 1)
        #expect(t1.outputs.allSatisfy { $0.feed == .fixed(hd) })
    }

    @Test func aSplitFileEndsAndContinuesInNumberedFiles() throws {
        let t0 = try Topology(size: hd).adding(record("/r/c.mp4", .mp4, .split))
        let (t1, s1) = t0.resized(to: small, taken: { _ in false })
        let second = Topology.Output(id: "record:/r/c-2.mp4", spec: .record(path: "/r/c.mp4", format: .mp4, policy: .split),
                                     location: "/r/c-2.mp4", feed: .live, fileSize: small)
        #expect(s1 == [.end(output: "record:/r/c.mp4"), .start(second)])
        #expect(t1.outputs == [second])
        let (t2, s2) = t1.resized(to: hd, taken: { _ in false })
        #expect(s2.last == .start(Topology.Output(id: "record:/r/c-3.mp4", spec: second.spec, location: "/r/c-3.mp4",
                                                  feed: .live, fileSize: hd)))
        #expect(t2.outputs.map(\.id) == ["record:/r/c-3.mp4"])
    }

    @Test func aSplitPassesOverNumberedFilesThatExist() throws {
        let t0 = try Topology(size: hd).adding(record("/r/c.mp4", .mp4, .split))
        let existing: Set = ["/r/c-2.mp4", "/r/c-3.mp4"]
        let (t1, _) = t0.resized(to: small, taken: { existing.contains($0) })
        #expect(t1.outputs.map(\.id) == ["record:/r/c-4.mp4"])
        let (t2, _) = t1.resized(to: hd, taken: { existing.contains($0) })
        #expect(t2.outputs.map(\.id) == ["record:/r/c-5.mp4"])
    }

    @Test func removingTheLastFileOfASizeRetiresItsEncoder() throws {
        let t0 = try Topology(size: hd).adding(record("/r/a.mp4"))
        let (t1, _) = t0.resized(to: small)
        let (t2, steps) = try t1.removing("record:/r/a.mp4")
        #expect(steps == [.end(output: "record:/r/a.mp4"), .retireEncoder(hd)])
        #expect(t2.outputs.isEmpty && t2.fixedEncoders.isEmpty)
    }

    @Test func removingAnUnknownOutputNamesTheRunningOnes() throws {
        let t = try Topology(size: hd).adding(record("/r/a.mp4"))
        #expect { try t.removing("record:/r/x.mp4") } throws: { error in
            "\(error)".contains("record:/r/a.mp4")
        }
    }

    @Test func outputsThatStoppedOnTheirOwnLeaveWithTheirEncoders() throws {
        let t0 = try Topology(size: hd).adding(record("/r/a.mp4")).adding(record("/r/b.ts", .ts))
        let (t1, _) = t0.resized(to: small)
        let (t2, steps) = t1.keeping(["record:/r/b.ts"])
        #expect(steps == [.retireEncoder(hd)])
        #expect(t2.outputs.map(\.id) == ["record:/r/b.ts"])
    }

    @Test func pushesAndStreamsFileNeverSwitch() throws {
        let push = Topology.Output(id: "push:rtmp://h/a/k", spec: .push(url: "rtmp://h/a/k", scheme: "rtmp"))
        let t0 = try Topology(size: hd).adding(push).adding(record("/r/s.ts", .ts, .split))
        let (t1, steps) = t0.resized(to: small)
        #expect(steps.isEmpty)
        #expect(t1.outputs == t0.outputs)
    }

    @Test func anRTPPushToAPortAnotherSendsToIsRefused() throws {
        func rtp(_ url: String) -> Topology.Output { .init(id: "push:" + url, spec: .push(url: url, scheme: "rtp")) }
        let t0 = try Topology(size: hd).adding(rtp("rtp://127.0.0.1:5004?audio=5006"))
        #expect(throws: Topology.Refusal.self) { try t0.adding(rtp("rtp://127.0.0.1:5006")) }
        // Another receiver (another Janus) on other ports or another host is what fan-out is.
        let t1 = try t0.adding(rtp("rtp://127.0.0.1:5008?audio=5010")).adding(rtp("rtp://127.0.0.2:5004?audio=5006"))
        #expect(t1.outputs.count == 3)
    }
}
