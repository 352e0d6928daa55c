import Testing
@testable import CompositorCore

/// `--push URL`: which scheme becomes which push, and what a URL of no known kind is told.
@Suite struct PushURLTests {
    @Test func whipURLsArePushesToAWHIPServer() throws {
        for url in ["whip+http://127.0.0.1:8080/whip", "WHIP+HTTPS://ingest.example/live/abc"] {
            guard case .push(let kept, "whip") = try OutputSpec.push(url) else {
                Issue.record("\(url) is not a WHIP push")
                continue
            }
            #expect(kept == url)
        }
    }

    @Test func anUnknownSchemeIsToldTheOnesThatExist() {
        for url in ["whip://127.0.0.1/whip", "http://127.0.0.1/whip"] {
            do {
                _ = try OutputSpec.push(url)
                Issue.record("\(url) was taken")
            } catch {
                #expect(error.description.contains("unsupported scheme") && error.description.contains("whip+http(s)://"),
                        "\(url): \(error.description)")
            }
        }
    }
}
