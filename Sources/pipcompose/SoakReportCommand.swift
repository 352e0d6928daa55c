import ArgumentParser
import Compositor
import Foundation

/// `soak report --prometheus URL`: soak.json and soak.html for a fleet, from what Prometheus scraped.
struct SoakReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Build soak.json and soak.html from a Prometheus that scraped probes and soaks run with --metrics.",
        discussion: """
        The whole fleet in one report: every probe and soak viewer Prometheus scraped between --from and --to, with
        latency, fps, drops, SSIM and A/V offset per step, the soaks' CPU and memory, and the totals (each counter's
        rise over the span). Percentiles come from the summed buckets, good to one bucket (docs/MEASURE.md).
        Times: now, RFC 3339 (2026-11-26T20:00:00Z), seconds since 1970, or before now (-90s, -15m, -2h, -1d).
        """
    )

    @Option(help: ArgumentHelp("The Prometheus to read, e.g. http://127.0.0.1:9090.", valueName: "url"))
    var prometheus: String

    // Taken whatever it starts with: a time before now starts with a dash (-15m).
    @Option(parsing: .unconditional, help: "Start of the span.")
    var from: String = "-1h"

    @Option(parsing: .unconditional, help: "End of the span.")
    var to: String = "now"

    @Option(help: "Seconds between samples (default: the targets' scrape interval, or more to keep under Prometheus's 11 000 points; rates are taken over at least four scrapes).")
    var step: Int = 0

    @Option(help: "Folder for soak.json and soak.html (created if missing; files there are replaced).")
    var report: String = "soak-report"

    func validate() throws {
        guard let u = URL(string: prometheus), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
            throw ValidationError("--prometheus takes Prometheus's address, e.g. http://127.0.0.1:9090, got '\(prometheus)'")
        }
        guard PrometheusSoakReport.parseTime(from) != nil else { throw ValidationError(Self.timeHelp("--from", from)) }
        guard PrometheusSoakReport.parseTime(to) != nil else { throw ValidationError(Self.timeHelp("--to", to)) }
        guard step >= 0 else { throw ValidationError("--step must be 0 (automatic) or more seconds") }
    }

    static func timeHelp(_ option: String, _ text: String) -> String {
        "\(option) takes now, an RFC 3339 time (2026-11-26T20:00:00Z), seconds since 1970, or a time before now "
            + "(-90s, -15m, -2h, -1d), got '\(text)'"
    }

    func run() throws {
        let now = Date()
        var builder = PrometheusSoakReport(prometheus: URL(string: prometheus)!, from: PrometheusSoakReport.parseTime(from, now: now)!,
                                           to: PrometheusSoakReport.parseTime(to, now: now)!)
        builder.step = step
        let result: SoakReport
        do { result = try builder.build() } catch { throw UserError("soak report: \(error.description)") }
        do {
            try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true)
            try result.json().write(to: URL(fileURLWithPath: report + "/soak.json"))
            try Data(SoakPlot.html(result).utf8).write(to: URL(fileURLWithPath: report + "/soak.html"))
        } catch {
            throw UserError("cannot write the report in \(report): \(error.localizedDescription)")
        }
        print(result.text)
        print("report: \(report)/soak.json, \(report)/soak.html")
        for p in result.problems { printLog("soak: \(p)") }
        if !result.problems.isEmpty { throw ExitCode(3) }
    }
}
