import Foundation
import Testing
import TestSupport
@testable import Compositor

/// What only the media checks tell about a scene: a font fontconfig lacks, a host that does not resolve, examples
/// that draw without a warning.
@Suite struct SceneMediaTests {
    @Test func aMissingFontWarnsWithItsPlaceAndTheSceneStillLoads() throws {
        var warnings: [String] = []
        let s = try scene("widgets:\n  - type: text\n    text: hi\n    style: {font: \"No Such Font Family\"}\n",
                          checks: MediaChecksLive(), warn: { warnings.append($0) })
        #expect(s.widgets.count == 1)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("test.yaml:4:") == true)
        #expect(warnings.first?.contains("'No Such Font Family' is not installed") == true)
    }

    /// A web page's host is checked by the system's resolver here (the core has none): `.invalid` never resolves,
    /// `localhost` always does.
    @Test func aWebPageWhoseHostDoesNotResolveIsRefused() {
        #expect(MediaChecksLive().hostProblem("pipcompose.invalid")?.contains("does not resolve") == true)
        #expect(MediaChecksLive().hostProblem("localhost") == nil)
        do {
            _ = try SceneLoader.parse("widgets: [{type: web, source: 'https://pipcompose.invalid/x'}]", file: "t.yaml")
            Issue.record("the scene loaded")
        } catch { #expect(error.message.contains("does not resolve"), "\(error.message)") }
    }

    @Test func theExamplesAndTheDemoLoad() throws {
        for name in ["info-panel.yaml", "timecode.yaml", "finite-slideshow.json"] {
            var warnings: [String] = []
            let s = try SceneLoader.load(path: examplesDir + "/" + name, warn: { warnings.append($0) })
            _ = Renderer(scene: s, warn: { warnings.append($0) })
            #expect(warnings.isEmpty, "\(name): \(warnings)")
        }
        #expect(DemoScene.load().widgets.count == 3)
        let finite = try SceneLoader.load(path: examplesDir + "/finite-slideshow.json")
        #expect(finite.timeline == .finite(duration: 120))
    }
}
