import Foundation
import Testing
import TestSupport
@testable import Compositor

@Suite struct RunSettingsTests {
    @Test func theConsoleLanguageReadsResizeStatusAndRefusesTheRest() {
        #expect(ConsoleCommand.parse("resize 480x270") == .resize(PixelSize(width: 480, height: 270)))
        #expect(ConsoleCommand.parse("640x360") == .resize(PixelSize(width: 640, height: 360)))
        #expect(ConsoleCommand.parse("status") == .status)
        #expect(ConsoleCommand.parse("") == .empty)
        guard case .unknown(let odd) = ConsoleCommand.parse("resize 481x270") else { Issue.record("odd size taken"); return }
        #expect(odd.contains("even"), "\(odd)")
        guard case .unknown(let word) = ConsoleCommand.parse("hello") else { Issue.record("'hello' taken"); return }
        #expect(word.contains("resize WxH"), "\(word)")
    }

    @Test func outputsAreCheckedInOrderWithTheRuleInEachRefusal() throws {
        let dir = try TempDir()
        var r = OutputRequest()
        r.rtsp = "0/pip"
        r.records = [dir.file("a.mp4"), dir.file("b.ts")]
        r.recordResize = .split
        r.pushes = ["srt://127.0.0.1:9000"]
        let specs = try r.specs()
        #expect(specs.count == 4)
        guard case .rtsp(let e) = specs[0], case .record(_, .mp4, .split) = specs[1], case .push(_, "srt") = specs[3]
        else { Issue.record("\(specs)"); return }
        #expect(e.port == 0 && e.path == "/pip")

        var login = OutputRequest()
        login.rtspPassword = "secret"
        #expect(throws: OutputSpec.Invalid.self) { try login.specs() }
        do { _ = try login.specs() } catch { #expect(error.description.contains("needs --rtsp-user")) }
        login.rtspUser = "viewer"
        login.rtspPassword = nil
        #expect(try login.specs().count == 1, "a user alone: viewers log in with watch links")

        var secure = OutputRequest()
        secure.rtsp = "rtsps://0.0.0.0:8322/live"
        do { _ = try secure.specs(); Issue.record("rtsps:// without a certificate was taken") } catch {
            #expect(error.description.contains("--tls-cert FILE --tls-key FILE"))
        }
        secure.tlsCertificate = "/c.pem"
        secure.tlsKey = "/k.pem"
        guard case .rtsp(let s) = try secure.specs().first else { Issue.record("no RTSP"); return }
        #expect(s.secure && s.tls?.certificate == "/c.pem" && s.tls?.key == "/k.pem" && s.port == 8322 && s.path == "/live")
        #expect(s.url == "rtsps://127.0.0.1:8322/live")
        #expect(try RTSPEndpoint.parse("rtsp://8554/pip").secure == false)

        var missing = OutputRequest()
        missing.pipelines = [dir.file("nope.pipeline")]
        do { _ = try missing.specs(); Issue.record("a missing pipeline file was taken") } catch {
            #expect(error.description.contains("no such readable file"))
        }
    }

    @Test func theControlAPIOffLoopbackNeedsAToken() throws {
        try ControlServer.checkExposure(host: "127.0.0.1", token: nil)
        try ControlServer.checkExposure(host: "::1", token: nil)
        try ControlServer.checkExposure(host: "0.0.0.0", token: "secret")
        #expect(throws: ControlError.self) { try ControlServer.checkExposure(host: "0.0.0.0", token: nil) }
        #expect(throws: ControlError.self) { try ControlServer.checkExposure(host: "192.168.1.2", token: "") }
    }
}
