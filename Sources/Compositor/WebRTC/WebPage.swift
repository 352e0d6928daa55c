import Foundation

/// The live page (`web/index.html`): read from disk at each request, found like the pipelines folder
/// ($PIPCOMPOSE_WEB, ./web, or next to the pipelines folder beside the binary's build tree). Its scripts (the strip
/// reader `web/strip.js`, shared with the Janus viewer page; the Media Session; the pop-out) are inlined where the
/// page names them, so the page stays one request that carries its token.
public enum WebPage {
    public struct NotFound: Error, CustomStringConvertible {
        public let searched: [String]
        public var what = "the live page web/index.html"
        public var description: String {
            "\(what) was not found; looked in \(searched.joined(separator: ", ")); set PIPCOMPOSE_WEB to its folder"
        }
    }

    public static func load() throws -> Data {
        var dirs: [String] = []
        if let env = ProcessInfo.processInfo.environment["PIPCOMPOSE_WEB"], !env.isEmpty { dirs.append(env) }
        dirs += PipelineTemplate.searchPath().map { (($0 as NSString).deletingLastPathComponent as NSString).appendingPathComponent("web") }
        var seen = Set<String>()
        dirs = dirs.filter { seen.insert($0).inserted }
        for d in dirs {
            guard let data = FileManager.default.contents(atPath: d + "/index.html") else { continue }
            return try inline(String(decoding: data, as: UTF8.self), from: d)
        }
        throw NotFound(searched: dirs)
    }

    /// The scripts beside the page it names with `<script src="NAME.js"></script>`: the strip reader, the Media
    /// Session and the pop-out.
    static let scripts = ["strip.js", "mediasession.js", "popout.js"]

    /// The page with each `<script src="NAME.js">` of `scripts` replaced by the script itself.
    static func inline(_ page: String, from dir: String) throws -> Data {
        var page = page
        for name in scripts {
            let tag = #"<script src="\#(name)"></script>"#
            guard page.contains(tag) else { continue }
            guard let script = FileManager.default.contents(atPath: dir + "/" + name) else {
                throw NotFound(searched: [dir], what: "the live page's script web/\(name)")
            }
            page = page.replacingOccurrences(of: tag, with: "<script>\n" + String(decoding: script, as: UTF8.self) + "</script>")
        }
        return Data(page.utf8)
    }
}
