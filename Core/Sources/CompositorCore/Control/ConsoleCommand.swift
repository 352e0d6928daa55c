/// The little language `run` reads on standard input while it runs: `resize WxH` (or just `WxH`) and `status`.
public enum ConsoleCommand: Equatable, Sendable {
    case resize(PixelSize)
    case status
    /// A line that is not a command, with what to tell the user.
    case unknown(String)
    case empty

    public static func parse(_ line: String) -> ConsoleCommand {
        let words = line.split(separator: " ").map(String.init)
        guard let first = words.first else { return .empty }
        if first == "status" { return .status }
        guard let size = first == "resize" ? words.dropFirst().first : (first.contains("x") ? first : nil) else {
            return .unknown("unknown command '\(line)'; use 'resize WxH' or 'status'")
        }
        do { return .resize(try RenderSize.parse(size)) } catch { return .unknown("\(error)") }
    }
}
