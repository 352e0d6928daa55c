import Foundation

/// The live page (`web/index.html`): read from disk at each request, found like the pipelines folder
/// ($PIPCOMPOSE_WEB, ./web, or next to the pipelines folder beside the binary's build tree).
public enum WebPage {
    public struct NotFound: Error, CustomStringConvertible {
        public let searched: [String]
        public var description: String {
            "the live page web/index.html was not found; looked in \(searched.joined(separator: ", ")); set PIPCOMPOSE_WEB to its folder"
        }
    }

    public static func load() throws -> Data {
        var dirs: [String] = []
        if let env = ProcessInfo.processInfo.environment["PIPCOMPOSE_WEB"], !env.isEmpty { dirs.append(env) }
        dirs += PipelineTemplate.searchPath().map { (($0 as NSString).deletingLastPathComponent as NSString).appendingPathComponent("web") }
        var seen = Set<String>()
        dirs = dirs.filter { seen.insert($0).inserted }
        for d in dirs {
            if let data = FileManager.default.contents(atPath: d + "/index.html") { return data }
        }
        throw NotFound(searched: dirs)
    }
}
