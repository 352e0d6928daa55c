import Foundation
import Testing
import TestSupport

/// Every decoded frame of `file` as RGB rows of `width × height` pixels (ffmpeg, as a viewer decodes it).
private func decodedFrames(_ file: String, width: Int, height: Int, dir: TempDir) throws -> [[UInt8]] {
    let raw = dir.file(URL(fileURLWithPath: file).lastPathComponent + ".rgb")
    let r = try tool(["ffmpeg", "-v", "error", "-y", "-i", file, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
    #expect(r.status == 0, "\(r.err)")
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
    let size = width * height * 3
    return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<$0 + size]) }
}

/// What a pixel of a decoded frame is nearest to: red, green, blue or black (after the encoder, within 60).
private func hue(_ frame: [UInt8], _ x: Int, _ y: Int, width: Int) -> String {
    let i = (y * width + x) * 3, p = (Int(frame[i]), Int(frame[i + 1]), Int(frame[i + 2]))
    for (name, c) in [("red", (255, 0, 0)), ("green", (0, 255, 0)), ("blue", (0, 0, 255)), ("black", (0, 0, 0))]
    where abs(p.0 - c.0) < 60 && abs(p.1 - c.1) < 60 && abs(p.2 - c.2) < 60 { return name }
    return "\(p)"
}

/// A 320x180 scene of one page: a red box its CSS animation moves `distance` px in `seconds`, a green bar
/// `setInterval` makes `barStep` px longer every 100 ms, and `update({bg})` colouring the page; with cues that call
/// `update` (blue) at `cueAt` seconds. The scene's path and the cues'.
private func movingPage(_ dir: TempDir, seconds: Int, distance: Int, barStep: Int, cueAt: Double) throws -> (String, String) {
    _ = try dir.write("page.html", """
    <!doctype html><html><head><style>
    html,body{margin:0;background:#000;overflow:hidden}
    #box{position:absolute;top:50px;left:0;width:20px;height:20px;background:#f00;animation:move \(seconds)s linear}
    @keyframes move{from{left:0}to{left:\(distance)px}}
    #bar{position:absolute;top:0;left:0;height:20px;width:0;background:#0f0}
    </style></head><body><div id="box"></div><div id="bar"></div><script>
    let count = 0;
    setInterval(() => { count++; document.getElementById("bar").style.width = (count * \(barStep)) + "px"; }, 100);
    function update(d) { document.documentElement.style.background = JSON.parse(d).bg; }
    </script></body></html>
    """)
    let scene = try dir.write("page.yaml", """
    size: 320x180
    fps: 30
    widgets:
      - {id: page, type: web, source: page.html, place: fill}
    """)
    let cues = try dir.write("cues.yaml", "- {at: \(cueAt), widget: page, call: update, data: {bg: \"#0000ff\"}}\n")
    return (scene, cues)
}

extension EndToEnd {
    /// `pipcompose render` of a web page (issue 51): the page runs on the scene's clock, one frame a frame.
    @Suite(.serialized) struct RenderWebTests {
        /// A page with a CSS animation (a red box crossing 200 px in 2 s), a JavaScript counter (a green bar 10 px
        /// longer every 100 ms, by `setInterval`) and a cue that calls its `update` at 1.5 s (the page turns blue).
        /// Rendered twice, with a rendition beside it, far faster than the page's own time would allow on the wall
        /// clock:
        /// - the two renders decode to the same 60 pictures, frame for frame, and no two frames of one are the same
        ///   (the page moved in every one);
        /// - frame n shows the box at 200 × n ÷ 60 px and the bar at 10 px per 100 ms of scene time (frame 29: 90 px,
        ///   frame 30: 100 px), what the page draws at that scene time whatever the render's speed;
        /// - the call shows first in frame 45, in the main file and in the rendition.
        @Test func aPageRendersOnTheSceneClockTheSameEveryTime() throws {
            let dir = try TempDir()
            let (scene, cues) = try movingPage(dir, seconds: 2, distance: 200, barStep: 10, cueAt: 1.5)
            var hashes: [[String]] = []
            for name in ["one", "two"] {
                let r = try tool([binary, "render", scene, "--duration", "2", "--cues", cues, "-o", dir.file(name + ".mkv"),
                                  "-o", dir.file(name + "-small.mkv") + "@160x90"])
                #expect(r.status == 0 && r.out.contains("60 frames"), "\(r.out)\(r.err)")
                hashes.append(try frameHashes(dir.file(name + ".mkv")))
                hashes.append(try frameHashes(dir.file(name + "-small.mkv")))
            }
            #expect(hashes[0].count == 60 && hashes[0] == hashes[2], "\(hashes[0].count) vs \(hashes[2].count) frames")
            #expect(hashes[1].count == 60 && hashes[1] == hashes[3])
            #expect(Set(hashes[0]).count == 60, "frames repeated: the page did not move in every frame")

            let frames = try decodedFrames(dir.file("one.mkv"), width: 320, height: 180, dir: dir)
            try #require(frames.count == 60)
            for n in [6, 15, 30, 51] {
                let left = 200 * n / 60
                #expect(hue(frames[n], left + 10, 60, width: 320) == "red", "frame \(n): no box at \(left)")
                #expect(hue(frames[n], left + 30, 60, width: 320) != "red", "frame \(n): the box is past \(left)")
                if left >= 12 { #expect(hue(frames[n], left - 10, 60, width: 320) != "red", "frame \(n): the box is before \(left)") }
            }
            for (n, width) in [(2, 0), (3, 10), (29, 90), (30, 100), (44, 140)] {
                if width > 0 { #expect(hue(frames[n], width - 5, 10, width: 320) == "green", "frame \(n): bar shorter than \(width)") }
                #expect(hue(frames[n], width + 5, 10, width: 320) != "green", "frame \(n): bar longer than \(width)")
            }
            #expect(hue(frames[44], 300, 160, width: 320) == "black" && hue(frames[45], 300, 160, width: 320) == "blue")
            let small = try decodedFrames(dir.file("one-small.mkv"), width: 160, height: 90, dir: dir)
            try #require(small.count == 60)
            #expect(hue(small[44], 150, 80, width: 160) == "black" && hue(small[45], 150, 80, width: 160) == "blue")
        }

        /// A page whose scripts cannot be put on the scene's clock (one from elsewhere) is refused before a frame is
        /// drawn, saying what to do; so is a cue calling a function of a widget that is not a page.
        @Test func whatCannotBeSteppedIsRefused() throws {
            let dir = try TempDir()
            let remote = try dir.write("remote.yaml", """
            size: 320x180
            widgets:
              - {id: page, type: web, source: "http://127.0.0.1:9/page.html", place: fill}
            """)
            let text = try textScene(dir, "text.yaml", "Hello", size: "320x180", strip: 0.1)
            let call = try dir.write("call.yaml", "- {at: 1, widget: lower, call: update, data: {a: 1}}\n")
            let both = try dir.write("both.yaml", "- {at: 1, widget: lower, call: update, set: {text: x}}\n")
            let cases: [([String], String)] = [
                ([remote, "-o", dir.file("r.mp4")], "its page comes from elsewhere"),
                ([text, "--cues", call, "-o", dir.file("c.mp4")], "call.yaml:1:3: 'lower' is not a web widget"),
                ([text, "--cues", both, "-o", dir.file("b.mp4")], "either 'set' (properties) or 'call'"),
            ]
            for (args, message) in cases {
                let r = try tool([binary, "render", "--duration", "2"] + args)
                #expect(r.status != 0 && r.err.contains(message), "\(args): \(r.err)")
            }
            for name in ["r.mp4", "c.mp4", "b.mp4"] { #expect(!FileManager.default.fileExists(atPath: dir.file(name))) }
        }

        /// A page whose process dies mid-render (killed, as a crash or a WebKit that stops drawing would leave it) is
        /// started again and replays the frames before, undrawn: the render finishes, says so, and decodes to the same
        /// pictures as a render where nothing happened.
        @Test func aPageStartedAgainMidRenderReplaysToTheSamePictures() throws {
            let dir = try TempDir()
            let (scene, cues) = try movingPage(dir, seconds: 6, distance: 300, barStep: 5, cueAt: 0.5)
            let clean = try tool([binary, "render", scene, "--duration", "6", "--cues", cues, "-o", dir.file("clean.mkv")])
            #expect(clean.status == 0, "\(clean.out)\(clean.err)")
            let p = try LiveProcess(binary, ["render", scene, "--duration", "6", "--cues", cues, "-o", dir.file("killed.mkv")])
            // Past the cue (a second in: the first progress line), the page's process is killed.
            #expect(p.waitForLine(timeout: 60) { $0.hasPrefix("rendered ") } != nil, "\(p.allOutput)")
            let killed = try tool(["pkill", "-9", "-P", String(p.process.processIdentifier), "-f", "web-page"])
            #expect(killed.status == 0, "no page process to kill: \(p.allOutput)")
            #expect(p.waitForExit(timeout: 120) == 0, "\(p.allOutput)")
            #expect(p.allOutput.contains("started again, its frames before replayed"), "\(p.allOutput)")
            let a = try frameHashes(dir.file("clean.mkv")), b = try frameHashes(dir.file("killed.mkv"))
            #expect(a.count == 180 && a == b, "\(a.count) vs \(b.count) frames, \(zip(a, b).filter { $0 != $1 }.count) differ")
        }
    }
}
