import Foundation
import Testing
import TestSupport

/// The colour of the pixel at (x, y) of a PNG, as "R,G,B".
private func pixel(_ png: String, _ x: Int, _ y: Int, width: Int) throws -> String {
    let rgb = try rgbPixels(png)
    let o = (y * width + x) * 3
    guard o + 2 < rgb.count else { return "none" }
    return "\(rgb[o]),\(rgb[o + 1]),\(rgb[o + 2])"
}

extension EndToEnd {
    /// A preview with data (issue 51): a web widget's template drawn with data it is given, in a page of its own.
    @Suite(.serialized) struct WebPreviewTests {
        /// A template that paints its background in the colour its data names: red from the scene's data.
        static let scene = """
        size: 320x180
        fps: 30
        background: "#000000"
        widgets:
          - id: lower
            type: web
            html: "<body style='margin:0;background:#0000ff'><script>function update(s){ const d = typeof s === 'string' ? JSON.parse(s) : s; document.body.style.background = d.color; }</script></body>"
            data: {color: "#ff0000"}
            place: fill
        """

        /// `snapshot --data` draws the template with the data given instead of the scene's; bad data and a widget
        /// that is not a web widget are refused with what to give.
        @Test func aSnapshotDrawsTheTemplateWithTheDataGiven() throws {
            let dir = try TempDir()
            let scene = try dir.write("template.yaml", Self.scene)
            let plain = dir.file("plain.png"), given = dir.file("given.png")
            #expect(try tool([binary, "snapshot", scene, "-o", plain]).status == 0)
            let r = try tool([binary, "snapshot", scene, "--data", ##"lower={"color":"#00ff00"}"##, "-o", given])
            #expect(r.status == 0, "\(r.err)")
            #expect(try pixel(plain, 160, 90, width: 320) == "255,0,0")
            #expect(try pixel(given, 160, 90, width: 320) == "0,255,0")
            for (data, message) in [("lower=green", "must be a JSON object or list"),
                                    ("nobody={}", "no widget 'nobody' in the scene; its web widgets: lower"),
                                    ("lower", "--data takes ID=JSON")] {
                let bad = try tool([binary, "snapshot", scene, "--data", data, "-o", dir.file("bad.png")])
                #expect(bad.status != 0 && bad.err.contains(message), "\(data): \(bad.err)")
            }
        }

        /// While it runs: the live page shows blue (an update), `ctl web lower snapshot` with green data gives a
        /// picture of green, and the live page is still blue afterwards: the preview never touched it. A file that
        /// exists is kept unless --overwrite; a widget that is not there is a 404 naming the web widgets.
        @Test func aPreviewWhileRunningLeavesTheLivePageAlone() throws {
            let dir = try TempDir()
            let scene = try dir.write("template.yaml", Self.scene)
            let (p, _) = try startLive([scene, "--size", "320x180"], rtsp: false)
            let c = try #require(controlURL(p), "\(p.allOutput)")
            #expect(try ctl(c, ["web", "lower", "update", ##"{"color":"#0000ff"}"##]).status == 0)
            let live = dir.file("live.png")
            #expect(poll(until: {
                (try? ctl(c, ["frame", "-o", live, "--overwrite"]))?.status == 0 && (try? pixel(live, 160, 90, width: 320)) == "0,0,255"
            }, timeout: 30), "\(p.allOutput)")
            let preview = dir.file("preview.png")
            let made = try ctl(c, ["web", "lower", "snapshot", ##"{"color":"#00ff00"}"##, "-o", preview])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try pixel(preview, 160, 90, width: 320) == "0,255,0")
            let kept = try ctl(c, ["web", "lower", "snapshot", ##"{"color":"#00ff00"}"##, "-o", preview])
            #expect(kept.status != 0 && kept.stderr.contains("exists; pass --overwrite"), "\(kept.stderr)")
            let after = dir.file("after.png")
            #expect(try ctl(c, ["frame", "-o", after]).status == 0)
            // The picture of now is not written over a file that exists unless asked.
            let again = try ctl(c, ["frame", "-o", after])
            #expect(again.status != 0 && again.stderr.contains("exists; pass --overwrite"), "\(again.stderr)")
            #expect(try pixel(after, 160, 90, width: 320) == "0,0,255", "the live page was touched")
            let nobody = try ctl(c, ["web", "nobody", "snapshot", "{}", "-o", dir.file("n.png")])
            #expect(nobody.status != 0 && nobody.stderr.contains("no widget 'nobody'"), "\(nobody.stderr)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }
    }
}
