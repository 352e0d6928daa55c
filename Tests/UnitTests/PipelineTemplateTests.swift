import Foundation
import Testing
import TestSupport
@testable import Compositor

/// Pipelines are named gst-launch text with placeholders, found on the search path or by path.
@Suite struct PipelineTemplateTests {
    @Test func aShippedTemplateFillsItsPlaceholders() throws {
        let t = try PipelineTemplate.load("record-mp4")
        let text = try t.render(["location": PipelineTemplate.quoted(#"/tmp/a "b".mp4"#)])
        #expect(text.contains(#"location="/tmp/a \"b\".mp4""#))
        #expect(text.contains("appsrc name=in"))
        #expect(!text.contains("{"))
    }

    @Test func anUnfilledPlaceholderIsAnErrorNamingIt() throws {
        let t = try PipelineTemplate.load("record-mp4")
        #expect { try t.render([:]) } throws: { "\($0)".contains("{location}") }
    }

    @Test func aMissingTemplateAndAUserFileAreFoundOrNamed() throws {
        #expect { try PipelineTemplate.load("no-such-pipeline") } throws: { "\($0)".contains("no-such-pipeline") }
        let dir = try TempDir()
        let path = try dir.write("mine.pipeline", "# a comment\nappsrc name=in\n! fakesink\n")
        let text = try PipelineTemplate.load(path: path).render([:])
        #expect(text.contains("appsrc name=in") && text.contains("fakesink") && !text.contains("comment"))
    }

    @Test func aDashLineEndsAChainWithoutALink() throws {
        let t = PipelineTemplate(name: "t", path: "t", lines: ["rtspsrc name=src", "--", "capsfilter name=picture", "appsink"],
                                 audioLines: ["capsfilter name=sound", "--", "fakesrc", "fakesink"])
        #expect(try t.render([:]) == "rtspsrc name=src  capsfilter name=picture ! appsink")
        #expect(try t.render([:], audio: true)
                == "rtspsrc name=src  capsfilter name=picture ! appsink  capsfilter name=sound  fakesrc ! fakesink")
        // The shipped RTSP probe: its source stands alone, each chain starts at a named capsfilter.
        let probe = try PipelineTemplate.load("probe-rtsp").render(["location": "rtsp://h/p", "protocols": "tcp",
                                                                    "latency": "0", "buffer_mode": "none"], audio: true)
        #expect(!probe.contains("buffer-mode=none !") && probe.contains("capsfilter name=picture") && probe.contains("capsfilter name=sound"))
    }

    @Test func titleTagsAreEscapedForGstLaunchAndThenForTheStructure() {
        // Inner (GstStructure): title="a\"b\\c"; outer (gst-launch): every \ and " escaped once more.
        #expect(PipelineTemplate.titleTags(#"a"b\c"#) == #"title=\"a\\\"b\\\\c\""#)
    }
}
