import ArgumentParser
import Compositor
import Foundation

/// `pipcompose web-page`: the process a web widget runs its page in (PageRenderer). Not for users: the widget starts
/// it, talks to it over standard input and output, and ends it.
struct WebPageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-page", abstract: "Render one web page for a web widget (started by pipcompose itself).",
        shouldDisplay: false)

    @Option(help: "The page's URL.") var location: String
    @Option(help: "The viewport WebKit renders, WxH (fixed).") var viewport: String
    @Option(help: "The page's size in pixels within it, WxH (the widget's box).") var size: String
    @Option(help: "Frames a second.") var fps: Int = 30
    @Flag(help: "On the scene's clock: hand over a picture only when asked for one.") var stepped = false

    func run() throws {
        func pixels(_ text: String, _ name: String) throws -> PixelSize {
            let wh = text.split(separator: "x").compactMap { Int($0) }
            guard wh.count == 2, (1...7680).contains(wh[0]), (1...7680).contains(wh[1]) else {
                throw ValidationError("--\(name): expected WxH, 1 to 7680 pixels each")
            }
            return PixelSize(width: wh[0], height: wh[1])
        }
        let renderer = PageRenderer(location: location, viewport: try pixels(viewport, "viewport"),
                                    size: try pixels(size, "size"), fps: max(1, min(fps, 120)), stepped: stepped)
        throw ExitCode(renderer.run())
    }
}
