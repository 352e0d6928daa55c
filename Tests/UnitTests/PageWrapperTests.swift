import Foundation
import Testing
@testable import Compositor

/// Where pipcompose's script goes in a page of the scene (`PageWrapper.inject`): first, but after the doctype, so the
/// page keeps its standards mode.
@Suite struct PageWrapperTests {
    let tag = "<script>x()</script>"

    @Test func theScriptGoesRightAfterTheDoctype() {
        #expect(PageWrapper.inject(tag, into: "<!doctype html><html><body>hi</body></html>")
                == "<!doctype html>" + tag + "<html><body>hi</body></html>")
        #expect(PageWrapper.inject(tag, into: "\u{FEFF}\n  <!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\">\n<p>")
                == "\u{FEFF}\n  <!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\">" + tag + "\n<p>")
    }

    @Test func aPageWithoutADoctypeGetsItFirst() {
        #expect(PageWrapper.inject(tag, into: "<html><body>hi") == tag + "<html><body>hi")
        #expect(PageWrapper.inject(tag, into: "") == tag)
        #expect(PageWrapper.inject(tag, into: "   ") == tag + "   ")
        #expect(PageWrapper.inject(tag, into: "<!doctype") == tag + "<!doctype")
    }

    @Test func theAgentDrivesThePageFromInsideIt() {
        let o = PageWrapper.Options(inner: "http://127.0.0.1:1/s/f/page.html", sameOrigin: true,
                                    size: PixelSize(width: 320, height: 180), report: "http://127.0.0.1:1/s/r/page",
                                    data: "{\"a\":\"</script>\"}", state: "{\"width\":320}")
        let agent = PageWrapper.agent(o)
        #expect(agent.hasPrefix("<script>") && agent.hasSuffix("</script>"))
        #expect(agent.contains("const inPage = true;"))
        // The data cannot end the script early.
        #expect(agent.components(separatedBy: "</script>").count == 2)
        #expect(PageWrapper.html(o).contains("const inPage = false;") && PageWrapper.html(o).contains("<iframe"))
    }
}
