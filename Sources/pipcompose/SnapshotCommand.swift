import ArgumentParser
import Compositor
import Foundation

struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Render one frame of a scene to a PNG (no encoder)."
    )

    @Argument(help: "Scene file (YAML or JSON). Without one, the built-in demo scene.")
    var scene: String?

    @OptionGroup var size: SizeOption

    @Option(help: "Scene time in seconds: where animations (ticker, progress) are.")
    var at: Double = 0

    @Option(help: "Wall-clock time shown by clocks, as Unix seconds or ISO 8601 (default: now).")
    var wall: String?

    @Option(name: .shortAndLong, help: "Output PNG path.")
    var output: String

    @Flag(help: "Replace the output file if it exists.")
    var overwrite = false

    @Option(help: ArgumentHelp("A web widget's data instead of the scene's: ID=JSON, e.g. lower='{\"f0\":\"Jane Doe\"}' (a preview of the template with that data). Repeatable.", valueName: "id=json"))
    var data: [String] = []

    func validate() throws {
        guard at.isFinite, at >= 0 else { throw ValidationError("--at must be 0 or more seconds, got \(at)") }
        guard output.lowercased().hasSuffix(".png") else {
            throw ValidationError("--output must name a .png file, got '\(output)'")
        }
        let dir = URL(fileURLWithPath: output).deletingLastPathComponent().path
        guard FileManager.default.isWritableFile(atPath: dir) else {
            throw ValidationError("cannot write '\(output)': directory '\(dir)' does not exist or is not writable")
        }
        if FileManager.default.fileExists(atPath: output) && !overwrite {
            throw ValidationError("'\(output)' exists; pass --overwrite to replace it")
        }
        if let wall { _ = try parseWall(wall) }
        for d in data where !d.contains("=") { throw ValidationError("--data takes ID=JSON, got '\(d)'") }
    }

    func parseWall(_ text: String) throws -> Date {
        if let s = Double(text) { return Date(timeIntervalSince1970: s) }
        let f = ISO8601DateFormatter()
        if let d = f.date(from: text) { return d }
        throw ValidationError("--wall must be Unix seconds or ISO 8601 like 2026-01-02T03:04:05Z, got '\(text)'")
    }

    func run() throws {
        let scene = try loadScene(self.scene)
        var snapshot = Snapshot(scene: scene, size: try size.value(), at: at,
                                wall: try wall.map(parseWall) ?? Date())
        for d in data {
            let eq = d.firstIndex(of: "=")!
            do { try snapshot.give(data: String(d[d.index(after: eq)...]), toWebWidget: String(d[..<eq])) } catch {
                throw UserError("--data: \(error)")
            }
        }
        do { try snapshot.write(to: output, warn: printWarning) } catch { throw UserError("\(error)") }
        print("wrote \(output) (\(snapshot.size), t=\(at)s)")
    }
}
