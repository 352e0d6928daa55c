import Testing
@testable import CompositorCore

/// `--rendition WxH[@KBPS]`, the `@WxH` an output names one with, and how renditions sit in the topology.
@Suite struct RenditionTests {
    let main = PixelSize(width: 1280, height: 720)
    let ladder = PixelSize(width: 416, height: 234)

    @Test func aRenditionIsASizeAndMaybeABitrate() throws {
        #expect(try Rendition.parse("416x234") == Rendition(size: ladder))
        #expect(try Rendition.parse("416x234@400") == Rendition(size: ladder, bitrateKbps: 400))
        for bad in ["416x234@0", "416x234@-5", "416x234@", "416x234@1.5", "416x234@400@2", "417x234", "big", "@400"] {
            #expect(throws: OutputSpec.Invalid.self, "\(bad)") { try Rendition.parse(bad) }
        }
    }

    @Test func renditionsAreCheckedTogether() throws {
        let two = [Rendition(size: ladder), Rendition(size: PixelSize(width: 640, height: 360), bitrateKbps: 800)]
        #expect(try Rendition.checked(two, main: main) == two)
        #expect(throws: OutputSpec.Invalid.self) { try Rendition.checked([Rendition(size: main)], main: main) }
        #expect(throws: OutputSpec.Invalid.self) {
            try Rendition.checked([Rendition(size: ladder), Rendition(size: ladder, bitrateKbps: 300)], main: main)
        }
        #expect(throws: OutputSpec.Invalid.self) {
            try Rendition.checked(Array(repeating: Rendition(size: ladder), count: 9), main: main)
        }
    }

    @Test func onlyATrailingSizeNamesARendition() {
        #expect(Rendition.splitOutput("small.mp4@416x234") == ("small.mp4", ladder))
        #expect(Rendition.splitOutput("rtmp://user@host/live/key@416x234") == ("rtmp://user@host/live/key", ladder))
        #expect(Rendition.splitOutput("rtmp://user@host/live/key") == ("rtmp://user@host/live/key", nil))
        #expect(Rendition.splitOutput("clip@2x.mp4") == ("clip@2x.mp4", nil))
        #expect(Rendition.splitOutput("a.mp4@x234") == ("a.mp4@x234", nil))
        #expect(Rendition.splitOutput("a.mp4") == ("a.mp4", nil))
    }

    @Test func anOutputNamesARenditionOfTheRunOrTheMainSize() throws {
        let renditions = [Rendition(size: ladder)]
        #expect(try Rendition.resolve(ladder, output: "a.mp4", in: renditions, main: main) == ladder)
        #expect(try Rendition.resolve(main, output: "a.mp4", in: renditions, main: main) == nil)
        #expect(try Rendition.resolve(nil, output: "a.mp4", in: renditions, main: main) == nil)
        #expect(throws: OutputSpec.Invalid.self) {
            try Rendition.resolve(PixelSize(width: 320, height: 180), output: "a.mp4", in: renditions, main: main)
        }
    }

    /// A rendition's file keeps its size and encoder when the main picture is resized, and is what the
    /// topology says is watched; the main picture's fit file moves to a letterboxing encoder as before.
    @Test func aResizeOfTheMainPictureLeavesRenditionsAlone() throws {
        var t = Topology(size: main)
        t = try t.adding(Topology.Output(id: "record:/r/main.mp4", spec: .record(path: "/r/main.mp4", format: .mp4, policy: .split),
                                         location: "/r/main.mp4"))
        t = try t.adding(Topology.Output(id: "record:/r/s.mp4@416x234", spec: .record(path: "/r/s.mp4", format: .mp4, policy: .split),
                                         location: "/r/s.mp4", rendition: ladder))
        #expect(t.watchedRenditions == [ladder])
        #expect(t.output("record:/r/s.mp4@416x234")?.feed == .rendition(ladder))
        #expect(t.output("record:/r/s.mp4@416x234")?.fileSize == ladder)
        let (next, steps) = t.resized(to: PixelSize(width: 720, height: 1280), taken: { _ in false })
        // Only the main picture's split file ends and goes on in a numbered file.
        #expect(steps.contains(.end(output: "record:/r/main.mp4")))
        #expect(!steps.contains(.end(output: "record:/r/s.mp4@416x234")))
        #expect(next.output("record:/r/s.mp4@416x234")?.feed == .rendition(ladder))
        let (gone, _) = try next.removing("record:/r/s.mp4@416x234")
        #expect(gone.watchedRenditions.isEmpty)
    }

    /// `renditions:` in a scene, as --rendition takes them; a bad one is placed in the file.
    @Test func aSceneNamesItsRenditions() throws {
        let base = "size: 1280x720\nwidgets:\n  - {id: t, type: text, text: hi, place: fill}\n"
        let scene = try SceneLoader.parse("renditions: [416x234, \"640x360@800\"]\n" + base, file: "s.yaml", checks: NoMediaChecks())
        #expect(scene.renditions == [Rendition(size: ladder), Rendition(size: PixelSize(width: 640, height: 360), bitrateKbps: 800)])
        #expect(try SceneLoader.parse(base, file: "s.yaml", checks: NoMediaChecks()).renditions.isEmpty)
        for (bad, line, column, words) in [("renditions: [416x234@0]", 1, 14, "kbit/s"), ("renditions: [417x234]", 1, 14, "even"),
                                           ("renditions: [1280x720]", 1, 13, "main picture"),
                                           ("renditions: [416x234, 416x234]", 1, 13, "twice"), ("renditions: 416x234", 1, 13, "list")] {
            do {
                _ = try SceneLoader.parse(bad + "\n" + base, file: "s.yaml", checks: NoMediaChecks())
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.line == line && error.column == column && error.description.contains(words), "\(bad): \(error)")
            }
        }
    }

    /// A browser window's picture: too large a window gets a picture of its shape within the limit; past the
    /// renditions a run may make, the nearest picture there is, by both sides' ratios.
    @Test func aWindowGetsAPictureOfItsShapeWithinTheLimitOrTheNearest() {
        #expect(WindowPicture.areaLimit(main: main) == 1920 * 1080)
        #expect(WindowPicture.areaLimit(main: PixelSize(width: 3840, height: 2160)) == 3840 * 2160)
        #expect(WindowPicture.fitting(PixelSize(width: 640, height: 360), maxArea: 1920 * 1080) == PixelSize(width: 640, height: 360))
        let big = WindowPicture.fitting(PixelSize(width: 3840, height: 2160), maxArea: 1920 * 1080)
        #expect(big == PixelSize(width: 1920, height: 1080))
        let odd = WindowPicture.fitting(PixelSize(width: 3000, height: 1000), maxArea: 1920 * 1080)
        #expect(odd.width % 2 == 0 && odd.height % 2 == 0 && odd.width * odd.height <= 1920 * 1080, "\(odd)")
        #expect(abs(Double(odd.width) / Double(odd.height) - 3) < 0.01, "\(odd)")
        let pictures = [main, PixelSize(width: 640, height: 360), ladder, PixelSize(width: 360, height: 640)]
        #expect(WindowPicture.nearest(PixelSize(width: 600, height: 340), among: pictures) == PixelSize(width: 640, height: 360))
        #expect(WindowPicture.nearest(PixelSize(width: 300, height: 560), among: pictures) == PixelSize(width: 360, height: 640))
        #expect(WindowPicture.nearest(PixelSize(width: 200, height: 112), among: pictures) == ladder)
        // As far from both: the larger.
        #expect(WindowPicture.nearest(PixelSize(width: 320, height: 180), among: [PixelSize(width: 160, height: 90),
                                                                             PixelSize(width: 640, height: 360)])
                == PixelSize(width: 640, height: 360))
        #expect(WindowPicture.nearest(ladder, among: []) == nil)
    }
}
