import Foundation
import Yams

/// A web page as a widget: any HTML drawn by WPE WebKit at the widget's pixel size, re-laid (never reloaded) when its
/// box changes, fed with data as CasparCG templates are (`update(data)`, `play()`, `next()`, `stop()`), and kept in a
/// process of its own so that no page can stop or slow the stream.
public struct WebConfig: WidgetConfig, Equatable {
    /// Where the page comes from.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        /// A file below the scene's folder (served from there, so the page reads nothing else of the disk).
        case file(path: String, folder: String)
        /// An http(s) URL.
        case url(String)
        /// HTML given in the scene; relative links are taken from the scene's folder.
        case html(String, folder: String)

        public var description: String {
            switch self {
            case .file(let path, _): path
            case .url(let u): u
            case .html: "inline HTML"
            }
        }
    }

    public var source: Source = .html("", folder: ".")
    /// Frames a second taken from the page; nil: the stream's.
    public var fps: Int?
    /// Values handed to the page's `update(data)` once it has loaded, as JSON.
    public var data: String?
    /// The page is renewed as it grows (`--web-renew-growth`); false for a page whose own state no call carries.
    public var renew = true

    public enum Keys {
        static let source = WidgetKey.text("source", default: "", shown: "", doc: "the page: an HTML file below the "
                                           + "scene's folder (relative to it), or an http(s) URL; or give `html`")
        static let html = WidgetKey.text("html", default: "", shown: "", doc: "the page's HTML itself, instead of "
                                         + "`source`; relative links are taken from the scene's folder")
        static let fps = WidgetKey.whole("fps", range: 1...120, shown: "the stream's",
                                         doc: "how often the page is taken (1 for a page that changes rarely)")
        static let renew = WidgetKey.flag("renew", default: true, doc: "a new launch of the page takes its place, "
                                          + "without a gap, as it grows (--web-renew-growth); false for a page that "
                                          + "keeps state of its own no update carries")
        /// Any mapping or list, handed to `update` as JSON (what CasparCG and SPX templates read).
        static let data = WidgetKey<String>(
            info: KeyInfo(name: "data", type: "mapping", defaultValue: "none", range: "",
                          doc: "values handed to the page's update(data) as JSON when it has loaded, e.g. {f0: Jane}",
                          live: false, required: false),
            fallback: "",
            scene: { n, _ throws(SceneError) in
                let value = try n.json()
                guard let data = try? JSONEncoder().encode(value) else { throw n.error("cannot be written as JSON") }
                return String(decoding: data, as: UTF8.self)
            },
            json: { v, _ throws(ControlError) in throw .bad("'data' is given in the scene; use ctl web ID update") })
    }

    public static let type = "web"
    public static let summary = "any web page (HTML, CSS, JavaScript) drawn by WPE WebKit, fed with data as CasparCG "
        + "templates are"
    public static let keys = [Keys.source.info, Keys.html.info, Keys.fps.info, Keys.data.info, Keys.renew.info]
    public static let placement = Placement(edge: .fill, minPixels: 16, priority: 0)
    /// Transparent and edge to edge: the page draws what it wants (a `background` style fills behind it).
    public static var style: Style { .edgeToEdge }

    public init() {}

    public init(scene f: SceneFields) throws(SceneError) {
        let url = try f.value(Keys.source), html = try f.value(Keys.html)
        switch (url, html) {
        case (nil, nil):
            throw f.widget.error("a web widget needs 'source' (an HTML file or an http(s) URL) or 'html'")
        case (.some, .some):
            throw (f.node("html") ?? f.widget).error("give 'source' or 'html', not both")
        case (_, .some(let text)):
            source = .html(text, folder: f.context.folder)
        case (.some(let text), nil):
            switch Self.checkSource(text, f.context) {
            case .success(let s): source = s
            case .failure(let p): throw (f.node("source") ?? f.widget).error(p.message)
            }
        }
        fps = try f.read(Keys.fps)
        data = try f.value(Keys.data)
        renew = try f.read(Keys.renew)
    }

    /// An http(s) URL as it is; anything else is a file that must exist below the scene's folder.
    static func checkSource(_ text: String, _ context: SceneContext) -> Result<Source, KeyProblem> {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let scheme = t.range(of: "://").map({ t[..<$0.lowerBound].lowercased() }) {
            guard scheme == "http" || scheme == "https", let u = URL(string: t), let host = u.host, !host.isEmpty else {
                return .failure(KeyProblem("'\(t)' is not a page a web widget shows; give an http(s) URL or an HTML "
                                           + "file below the scene's folder"))
            }
            if let problem = context.checks.hostProblem(host) {
                return .failure(KeyProblem("'\(t)': \(problem); check the URL, or the network"))
            }
            return .success(.url(t))
        }
        guard !t.isEmpty else { return .failure(KeyProblem("must not be empty")) }
        let path = context.resolve(t)
        let folder = URL(fileURLWithPath: context.folder).standardizedFileURL.resolvingSymlinksInPath().path
        let real = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return .failure(KeyProblem("no such file '\(path)'; a web widget's source is an HTML file below the "
                                       + "scene's folder, or an http(s) URL"))
        }
        guard real.hasPrefix(folder == "/" ? "/" : folder + "/") else {
            return .failure(KeyProblem("'\(path)' is outside the scene's folder '\(folder)': a page reads only below "
                                       + "its scene; move it there, or serve it over http"))
        }
        return .success(.file(path: String(real.dropFirst(folder == "/" ? 1 : folder.count + 1)), folder: folder))
    }
}

extension NodeReader {
    /// The node as a JSON value: mappings and lists as such, scalars as text (what templates read); `typed`, with
    /// YAML's types: an unquoted true/false a bool, an unquoted number a number (what the control API's bodies carry).
    func json(typed: Bool = false) throws(SceneError) -> JSONValue {
        switch node {
        case .scalar(let s):
            guard typed, s.style == .plain else { return .string(s.string) }
            if let b = node.bool { return .bool(b) }
            if let d = node.float, d.isFinite { return .number(d) }
            return .string(s.string)
        case .sequence:
            var out: [JSONValue] = []
            for item in try list() { out.append(try item.json(typed: typed)) }
            return .array(out)
        case .mapping(let m):
            var out: [String: JSONValue] = [:]
            for (k, v) in m {
                guard let key = k.string else { throw error("keys must be plain names") }
                out[key] = try child(key, v).json(typed: typed)
            }
            return .object(out)
        case .alias: throw error("aliases are not read here; write the value out")
        }
    }
}
