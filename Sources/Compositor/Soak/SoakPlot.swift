import Foundation

/// soak.html: one self-contained page (inline SVG, no scripts, no network) with the soak's charts: latency
/// percentiles, viewer fps, drops, picture fidelity, memory and CPU over time, and the totals.
public enum SoakPlot {
    public struct Series {
        public var name: String
        public var color: String
        public var values: [Double?]
    }

    public static func html(_ r: SoakReport) -> String {
        let xs = r.samples.map { Double($0.t) }
        let charts = [
            chart("End-to-end latency (ms): render → decoded", xs, [
                Series(name: "p50", color: "#1f77b4", values: r.samples.map(\.latencyP50)),
                Series(name: "p99", color: "#ff7f0e", values: r.samples.map(\.latencyP99)),
                Series(name: "max", color: "#d62728", values: r.samples.map(\.latencyMax)),
            ]),
            chart("Decoded frames per second at the viewers", xs, [
                Series(name: "mean", color: "#2ca02c", values: r.samples.map(\.viewerFpsMean)),
                Series(name: "slowest viewer", color: "#9467bd", values: r.samples.map(\.viewerFpsMin)),
            ]),
            chart("Dropped frames per second", xs, [
                Series(name: "at the viewers", color: "#d62728", values: r.samples.map { Double($0.viewerDropped) }),
                Series(name: "at the sources", color: "#8c564b", values: r.samples.map { Double($0.sourceDropped) }),
                Series(name: "unreadable strips", color: "#7f7f7f", values: r.samples.map { Double($0.unreadable) }),
            ]),
            chart("Picture fidelity: lowest SSIM of any viewer's frame against the scene's render", xs, [
                Series(name: "SSIM min", color: "#1f77b4", values: r.samples.map(\.ssimMin)),
            ]),
            chart("Corrupt pictures per second (a region's SSIM below the threshold)", xs, [
                Series(name: "corrupt", color: "#d62728", values: r.samples.map { $0.corrupt.map(Double.init) }),
            ]),
            chart("Resident memory (MiB)", xs, [
                Series(name: "RSS", color: "#17becf", values: r.samples.map { Double($0.rssBytes) / 1_048_576 }),
            ]),
            chart("CPU (% of one core)", xs, [
                Series(name: "pipcompose", color: "#bcbd22", values: r.samples.map(\.cpuPercent)),
            ]),
        ] + (r.totals.avTicks == nil ? [] : [
            chart("A/V offset (ms): sound − picture, the extremes of the ticks the viewers heard each second", xs, [
                Series(name: "min", color: "#1f77b4", values: r.samples.map(\.avOffsetMin)),
                Series(name: "max", color: "#ff7f0e", values: r.samples.map(\.avOffsetMax)),
            ]),
        ])
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>pipcompose soak \(escape(r.started))</title>
        <style>body{font-family:sans-serif;margin:24px;color:#222}pre{background:#f4f4f4;padding:12px}
        svg{display:block;margin:12px 0 28px}</style></head><body>
        <h1>pipcompose soak</h1>
        <p>Started \(escape(r.started)). Data: soak.json (\(escape(r.source ?? "one sample a second")))</p>
        <pre>\(escape(r.text))</pre>
        \(charts.joined(separator: "\n"))
        </body></html>
        """
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// A round step for about five grid lines over `span`.
    static func step(_ span: Double) -> Double {
        guard span > 0, span.isFinite else { return 1 }
        let raw = span / 5, mag = pow(10, floor(log10(raw)))
        for m in [1.0, 2, 2.5, 5, 10] where raw <= m * mag { return m * mag }
        return 10 * mag
    }

    static func label(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e9 ? String(Int(v)) : String(format: "%.1f", v)
    }

    /// One line chart: the series drawn as polylines (a gap where a value is missing), axes with round ticks.
    public static func chart(_ title: String, _ xs: [Double], _ series: [Series]) -> String {
        let w = 900.0, h = 260.0, left = 60.0, right = 150.0, top = 30.0, bottom = 36.0
        let pw = w - left - right, ph = h - top - bottom
        let all = series.flatMap { $0.values.compactMap { $0 } }.filter(\.isFinite)
        let xMin = xs.first ?? 0, xMax = max(xs.last ?? 1, xMin + 1)
        var yMin = min(0, all.min() ?? 0), yMax = max(all.max() ?? 1, yMin + 1)
        let ys = step(yMax - yMin)
        yMin = floor(yMin / ys) * ys
        yMax = ceil(yMax / ys) * ys
        func px(_ x: Double) -> Double { left + (x - xMin) / (xMax - xMin) * pw }
        func py(_ y: Double) -> Double { top + ph - (y - yMin) / (yMax - yMin) * ph }
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(w))\" height=\"\(Int(h))\" "
            + "viewBox=\"0 0 \(Int(w)) \(Int(h))\" font-size=\"12\">"
        svg += "<text x=\"\(left)\" y=\"18\" font-size=\"14\" font-weight=\"bold\">\(escape(title))</text>"
        var y = yMin
        while y <= yMax + ys / 2 {
            svg += String(format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", left, py(y), left + pw, py(y))
            svg += String(format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%@</text>", left - 6, py(y) + 4, label(y))
            y += ys
        }
        let xstep = step(xMax - xMin)
        var x = ceil(xMin / xstep) * xstep
        while x <= xMax {
            svg += String(format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%@ s</text>", px(x), top + ph + 18, label(x))
            x += xstep
        }
        svg += String(format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>", left, top, pw, ph)
        for (k, s) in series.enumerated() {
            var runs: [[String]] = [[]]
            for (i, v) in s.values.enumerated() where i < xs.count {
                if let v, v.isFinite { runs[runs.count - 1].append(String(format: "%.1f,%.1f", px(xs[i]), py(v))) }
                else if !runs[runs.count - 1].isEmpty { runs.append([]) }
            }
            for run in runs where !run.isEmpty {
                if run.count == 1 {
                    let p = run[0].split(separator: ",")
                    svg += "<circle cx=\"\(p[0])\" cy=\"\(p[1])\" r=\"2\" fill=\"\(s.color)\"/>"
                } else {
                    svg += "<polyline fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"1.5\" points=\"\(run.joined(separator: " "))\"/>"
                }
            }
            let ly = top + 14 + Double(k) * 18
            svg += String(format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%@\" stroke-width=\"3\"/>",
                          left + pw + 12, ly - 4, left + pw + 32, ly - 4, s.color)
            svg += String(format: "<text x=\"%.1f\" y=\"%.1f\">%@</text>", left + pw + 38, ly, escape(s.name))
        }
        return svg + "</svg>"
    }
}
