import ArgumentParser
import Compositor
import Foundation

/// `--metrics [HOST:]PORT` and whom it answers, for the commands that measure (`probe`, `soak`).
struct MetricsOptions: ParsableArguments {
    @Option(help: ArgumentHelp("While running, serve the figures to Prometheus at http://[HOST:]PORT/metrics: latency, "
                               + "SSIM and A/V offset as histograms with fixed buckets (docs/MEASURE.md), frame counters.",
                               valueName: "[host:]port"))
    var metrics: String?

    @Option(help: "The bearer token /metrics needs (default: $PIPCOMPOSE_METRICS_TOKEN).")
    var metricsToken: String?

    @Flag(help: "Serve /metrics without a token (loopback only), for a Prometheus on this machine.")
    var metricsOpen = false

    var token: String? { metricsToken ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_METRICS_TOKEN"] }

    func validate() throws {
        if let metrics {
            do {
                let (host, port) = try ControlServer.parseAddress(metrics, option: "--metrics")
                _ = try MetricsServer(host: host, port: port, token: token, open: metricsOpen, text: { "" })
            } catch { throw ValidationError(error.message) }
        } else if metricsToken != nil || metricsOpen {
            throw ValidationError("--metrics-token and --metrics-open go with --metrics [HOST:]PORT")
        }
    }

    /// Starts serving `exported` when --metrics was given; prints where unless `quiet`.
    func serve(_ exported: ProbeMetrics, quiet: Bool) throws -> MetricsServer? {
        guard let metrics else { return nil }
        do {
            let (host, port) = try ControlServer.parseAddress(metrics, option: "--metrics")
            let s = try MetricsServer(host: host, port: port, token: token, open: metricsOpen, text: { exported.text() })
            try s.start()
            if !quiet { FileHandle.standardError.write(Data("metrics: \(s.url)\n".utf8)) }
            return s
        } catch let e as ControlError { throw UserError(e.message) }
    }
}
