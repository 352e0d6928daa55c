/// Prometheus's text exposition format (version 0.0.4), written one family at a time: `# HELP` and `# TYPE` once
/// per name, then its samples with their labels (values escaped as the format wants: backslash, quote, newline).
public struct PrometheusText {
    public typealias Labels = [(String, String)]
    private var out = ""
    private var declared: Set<String> = []

    public init() {}

    public var text: String { out }

    public mutating func counter(_ name: String, _ help: String, _ labels: Labels, _ value: Double) {
        declare(name, help, "counter")
        sample(name, labels, value)
    }

    public mutating func gauge(_ name: String, _ help: String, _ labels: Labels, _ value: Double) {
        declare(name, help, "gauge")
        sample(name, labels, value)
    }

    public mutating func histogram(_ name: String, _ help: String, _ labels: Labels, _ h: BucketCounts) {
        declare(name, help, "histogram")
        for (bound, n) in zip(h.bounds.map(Self.number) + ["+Inf"], h.cumulative) {
            sample(name + "_bucket", labels + [("le", bound)], Double(n))
        }
        sample(name + "_sum", labels, h.sum)
        sample(name + "_count", labels, Double(h.count))
    }

    private mutating func declare(_ name: String, _ help: String, _ type: String) {
        guard declared.insert(name).inserted else { return }
        out += "# HELP \(name) \(help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n"))\n"
        out += "# TYPE \(name) \(type)\n"
    }

    private mutating func sample(_ name: String, _ labels: Labels, _ value: Double) {
        out += name
        if !labels.isEmpty {
            out += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        out += " " + Self.number(value) + "\n"
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Whole numbers without a fraction, others as Swift prints them (shortest exact form), ±Inf and NaN as named.
    static func number(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return "\(v)"
    }
}
