import ArgumentParser
import Compositor
import Foundation

struct SoakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Run N live streams and M probing viewers in one process; sample everything each second.",
        discussion: """
        Each stream is a scene with a timecode strip served at rtsp://127.0.0.1:<free port>/soakI; viewer J
        probes stream J mod N. Every second: CPU, resident memory, frames rendered and dropped at the sources,
        the viewers' fps, drops, repeats and latency (and with --av the A/V offset of each tick), appended to REPORT/samples.jsonl as it runs; at the end
        REPORT/soak.json (totals, streams, viewers, samples) and REPORT/soak.html (charts).
        Ctrl-C ends early and still writes the report. Exit status 3 when a viewer saw drops or unreadable
        strips, a source dropped, or a viewer failed or never read a strip.
        """
    )

    @Option(help: "Live streams, 1...\(SoakConfig.maxStreams).")
    var streams: Int = 1

    @Option(help: "Probing viewers spread over the streams, 0...\(SoakConfig.maxViewers).")
    var viewers: Int = 1

    @Option(help: "Picture size of every stream, WIDTHxHEIGHT.")
    var size: String = "640x360"

    @Option(help: "Frames per second, 1...120.")
    var fps: Int = 30

    @Option(help: "Seconds to run.")
    var duration: Double = 60

    @Option(help: "RTSP transport of the viewers: tcp or udp.")
    var transport: String = "tcp"

    @Option(help: "Folder for soak.json and soak.html (created if missing).")
    var report: String = "soak-report"

    @Flag(help: "Streams carry sound (--audio ticks) and viewers measure the A/V offset of every tick: charted per second, with its drift per hour.")
    var av = false

    @Option(help: "Each viewer compares one picture in this many with the scene's render (SSIM; 1 = every picture).")
    var compareEvery: Int = 30

    func validate() throws {
        guard Probe.Transport(rawValue: transport) != nil else {
            throw ValidationError("--transport must be tcp or udp, got '\(transport)'")
        }
        do { try config().validate() } catch { throw ValidationError("\(error)") }
    }

    func config() throws -> SoakConfig {
        guard let s = try parseSizeOption(size) else { throw ValidationError("--size is required") }
        var c = SoakConfig(streams: streams, viewers: viewers, size: s, fps: fps, duration: duration,
                           reportDirectory: report)
        c.transport = Probe.Transport(rawValue: transport) ?? .tcp
        guard compareEvery >= 1 else { throw ValidationError("--compare-every must be 1 or more") }
        c.compareEvery = compareEvery
        c.av = av
        return c
    }

    func run() throws {
        let runner = SoakRunner(config: try config(), log: { printLog($0) })
        let stop = SignalFlag(SIGINT, SIGTERM)
        let result: SoakReport
        do { result = try runner.run(shouldStop: { stop.raised }) } catch { throw UserError("soak: \(error)") }
        print(result.text)
        print("report: \(runner.jsonPath), \(runner.htmlPath)")
        let problems = result.problems
        for p in problems { printLog("soak: \(p)") }
        if !problems.isEmpty { throw ExitCode(3) }
    }
}
