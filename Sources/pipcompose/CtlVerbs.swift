import ArgumentParser
import Compositor
import Foundation

struct CtlNowPlaying: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "nowplaying", abstract: "Update a now-playing card.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Option(help: "The card's widget id.") var widget: String = "nowplaying"
    @Option(help: "The title.") var title: String?
    @Option(help: "The artist.") var artist: String?
    @Option(help: "The album.") var album: String?
    @Option(help: "Artwork file.") var artwork: String?
    @Option(help: "Track length in seconds.") var duration: Double?
    @Option(help: "Position in seconds.") var position: Double?
    @Argument(help: "play or pause.") var state: PlayState?

    enum PlayState: String, ExpressibleByArgument { case play, pause }

    func run() throws {
        var body: [String: JSONValue] = [:]
        if let title { body["title"] = .string(title) }
        if let artist { body["artist"] = .string(artist) }
        if let album { body["album"] = .string(album) }
        if let artwork { body["artwork"] = .string(artwork) }
        if let duration { body["duration"] = .number(duration) }
        if let position { body["position"] = .number(position) }
        if let state { body["playing"] = .bool(state == .play) }
        try connection.call("PATCH", "/v1/widgets/\(widget)", body)
    }
}

enum StartStop: String, ExpressibleByArgument { case start, stop }

struct CtlRecord: CtlVerb {
    static let configuration = CommandConfiguration(
        commandName: "record", abstract: "Start or stop a recording while running.",
        discussion: "stop returns once the file is finalized (or says it was not, in time).")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Argument(help: "start or stop.") var action: StartStop
    @Argument(help: "The file (.mp4, .mkv or .ts), inside the run's --record-dir folders; FILE@WxH records one of the run's --rendition sizes.") var file: String
    @Flag(help: "Replace the file if it exists (start).") var overwrite = false

    func run() throws {
        try startOrStop(action, connection, id: ControlClient.recordID(file)) {
            try $0.startOutput(record: file, overwrite: overwrite)
        }
    }
}

struct CtlPush: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "push", abstract: "Start or stop a push to a server while running.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Argument(help: "start or stop.") var action: StartStop
    @Argument(help: "rtmp://, srt://, rtsp:// or rtp:// URL; URL@WxH pushes one of the run's --rendition sizes.") var url: String

    func run() throws {
        try startOrStop(action, connection, id: ControlClient.pushID(url)) { try $0.startOutput(push: url) }
    }
}

/// Starts an output (printing its id), or stops the output `id` and reports whether its file was finalized.
private func startOrStop(_ action: StartStop, _ connection: ControlOptions, id: String,
                         start: (ControlClient) throws -> String) throws {
    let client = try connection.client()
    guard action == .stop else { return say(try failing { try start(client) }) }
    let finalized = try failing { try client.stopOutput(id: id) }
    guard finalized else { throw UserError("\(id) stopped, but its end was not written in time; the file may lack the last second") }
    say("stopped \(id)")
}

struct CtlFrame: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "frame", abstract: "Save the picture viewers see now as PNG.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Option(help: "Scale to fit WxH (aspect kept).") var size: String?
    @Option(name: .shortAndLong, help: "The PNG file to write.") var output: String
    @Flag(help: "Replace the file if it exists.") var overwrite = false

    func run() throws {
        if FileManager.default.fileExists(atPath: output) && !overwrite {
            throw ValidationError("'\(output)' exists; pass --overwrite to replace it")
        }
        let query = size.map { "?size=\($0)" } ?? ""
        let data = try failing { try connection.client().send("GET", "/v1/frame.png" + query) }
        do { try data.write(to: URL(fileURLWithPath: output), options: overwrite ? [.atomic] : [.withoutOverwriting]) } catch {
            throw UserError("cannot write \(output): \(error.localizedDescription)")
        }
        say("wrote \(output)")
    }
}

struct CtlEvents: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "events", abstract: "Print each event as one JSON line until the server ends or Ctrl-C.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions

    func run() throws {
        let stream = try failing { try EventStream(client: connection.client()) }
        printLog("listening for events")
        while let (_, line) = stream.nextLine() { say(line) }
    }
}

struct CtlPage: CtlVerb {
    static let configuration = CommandConfiguration(
        commandName: "page", abstract: "Print the live page's URL with its token (run --webrtc), to open in a browser.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions

    func run() throws {
        let client = try connection.client()
        // Asked first, so that a wrong or missing token is said here rather than by the browser.
        try failing { try client.send("GET", "/v1/status") }
        say(ControlServer.pageURL(base: client.base, token: client.token))
    }
}

struct CtlWeb: CtlVerb {
    static let configuration = CommandConfiguration(
        commandName: "web", abstract: "Call into a web widget's page, as CasparCG does: update DATA, play, next, stop, remove, reload, invoke NAME [DATA].",
        discussion: """
        pipcompose ctl web lower update '{"f0":"Jane Doe","f1":"Reporter"}'
        pipcompose ctl web lower play | next | stop | remove | reload
        pipcompose ctl web board invoke setScore '{"home":2,"away":1}'
        pipcompose ctl web lower snapshot '{"f0":"Jane Doe"}' -o preview.png   # the live page untouched
        pipcompose ctl web lower play --at-frame 5400        # its picture lands on frame 5400 everywhere
        Says what the page answered: done, or the page's error (exit 1).
        """)
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Argument(help: "The web widget's id.") var id: String
    @Argument(help: "update, play, next, stop, remove, reload, invoke, or snapshot (a preview with data, -o FILE).")
    var call: String
    @Argument(help: "update, snapshot: the data (JSON; update also <templateData> XML); invoke: the function's name, then its argument.")
    var rest: [String] = []
    @Option(name: .shortAndLong, help: "snapshot: the PNG file to write.") var output: String?
    @Option(help: "snapshot: draw at this size (default: the picture's).") var size: String?
    @Flag(help: "snapshot: replace the file if it exists.") var overwrite = false
    @Option(help: "Land the call's picture on this frame (the timecode strip's number), in every output at once.")
    var atFrame: Int64?
    @Option(help: "Land the call's picture on the first frame at or past this scene time (seconds).")
    var atTime: Double?

    func validate() throws {
        if call == "snapshot" {
            guard rest.count == 1 else { throw ValidationError("snapshot takes the data, e.g. '{\"f0\":\"Jane\"}', and -o FILE") }
            guard let output else { throw ValidationError("snapshot needs -o FILE.png") }
            if FileManager.default.fileExists(atPath: output) && !overwrite {
                throw ValidationError("'\(output)' exists; pass --overwrite to replace it")
            }
            return
        }
        let calls = ["update", "play", "next", "stop", "remove", "reload", "invoke", "snapshot"]
        guard calls.contains(call) else { throw ValidationError("'\(call)' is not a call; use \(calls.joined(separator: ", "))") }
        if call == "update" && rest.count != 1 { throw ValidationError("update takes one argument: the data, e.g. '{\"f0\":\"Jane\"}'") }
        if call == "invoke" && !(1...2).contains(rest.count) { throw ValidationError("invoke takes a function's name and an optional argument") }
        if !["update", "invoke"].contains(call) && !rest.isEmpty { throw ValidationError("\(call) takes no argument") }
    }

    func run() throws {
        if call == "snapshot", let output {
            var body: [String: JSONValue] = ["data": .string(rest[0])]
            if let size { body["size"] = .string(size) }
            let png = try failing { try connection.client().send("POST", "/v1/web/\(id)/snapshot", json: body) }
            try png.write(to: URL(fileURLWithPath: output))
            say("wrote \(output)")
            return
        }
        var body: [String: JSONValue] = ["call": .string(call)]
        if call == "update" { body["data"] = .string(rest[0]) }
        if let atFrame { body["at"] = .object(["frame": .number(Double(atFrame))]) }
        if let atTime { body["at"] = .object(["time": .number(atTime)]) }
        if call == "invoke" {
            body["name"] = .string(rest[0])
            if rest.count == 2 { body["data"] = .string(rest[1]) }
        }
        try connection.call("POST", "/v1/web/\(id)", body)
    }
}
