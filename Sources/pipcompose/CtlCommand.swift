import ArgumentParser
import Compositor
import Foundation

/// `pipcompose ctl …`: the control API from the command line, one subcommand per verb. Prints the server's
/// JSON; exits non-zero with the server's message when a request is refused.
struct CtlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Control a running pipcompose: resize, pause, play, skip, set widget properties, record.",
        discussion: """
        Examples:
          pipcompose ctl status
          pipcompose ctl resize 480x270
          pipcompose ctl pause | play | skip -15 | skip next
          pipcompose ctl set memo.text "First line\\nSecond line"
          pipcompose ctl nowplaying --title "Song" --artist "Band" --position 0
          pipcompose ctl record start /tmp/clip.mp4    |  pipcompose ctl record stop /tmp/clip.mp4
          pipcompose ctl frame --size 320x180 -o now.png
          pipcompose ctl events
          pipcompose ctl page                          # the live page's URL, with its token

        The token: --token, else $PIPCOMPOSE_CONTROL_TOKEN, else the file your own `run` keeps for its port.
        """,
        subcommands: [CtlStatus.self, CtlResize.self, CtlPause.self, CtlPlay.self, CtlSkip.self, CtlSet.self,
                      CtlNowPlaying.self, CtlRecord.self, CtlPush.self, CtlFrame.self, CtlEvents.self, CtlPage.self, CtlWeb.self,
                      CtlLink.self]
    )

    /// `--control`/`--token` given before the verb (`ctl --control URL status`).
    @OptionGroup var connection: ControlOptions
}

/// `--control`/`--token` given after the verb win over those given before it.
protocol CtlVerb: ParsableCommand {
    var ctl: CtlCommand { get }
    var own: ControlOptions { get }
}

extension CtlVerb {
    var connection: ControlOptions {
        var c = own
        c.control = own.control ?? ctl.connection.control
        c.token = own.token ?? ctl.connection.token
        return c
    }
}

/// Which instance to talk to, shared by every `ctl` verb.
struct ControlOptions: ParsableArguments {
    @Option(help: "The instance's control URL (default: $PIPCOMPOSE_CONTROL or http://127.0.0.1:8555).")
    var control: String?

    @Option(help: "Bearer token (default: $PIPCOMPOSE_CONTROL_TOKEN, else the one your own run on that port keeps for you).")
    var token: String?

    func client() throws -> ControlClient {
        let env = ProcessInfo.processInfo.environment
        do {
            return try ControlClient.local(base: control ?? env["PIPCOMPOSE_CONTROL"] ?? "http://127.0.0.1:8555",
                                           token: token ?? env["PIPCOMPOSE_CONTROL_TOKEN"])
        } catch { throw ValidationError(error.description) }
    }

    /// Sends one request and prints the answer's JSON.
    func call(_ method: String, _ path: String, _ body: [String: JSONValue]? = nil) throws {
        let data = try failing { try client().send(method, path, json: body) }
        say(String(decoding: data, as: UTF8.self))
    }
}

/// Runs a client call; a refusal or an unreachable server becomes the command's error message.
func failing<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as ControlClient.Failure { throw UserError(e.message) }
}

struct CtlStatus: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "State, size, counters, outputs, viewers as JSON.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    func run() throws { try connection.call("GET", "/v1/status") }
}

struct CtlResize: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "resize", abstract: "The render-size callback: re-lay the picture at WxH.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Argument(help: "The new size, e.g. 480x270.") var size: String
    func run() throws { try connection.call("POST", "/v1/resize", ["size": .string(size)]) }
}

struct CtlPause: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Freeze the animations; frames keep flowing.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    func run() throws { try connection.call("POST", "/v1/pause") }
}

struct CtlPlay: CtlVerb {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Resume where the scene stood.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    func run() throws { try connection.call("POST", "/v1/play") }
}

struct CtlSkip: CtlVerb {
    static let configuration = CommandConfiguration(
        commandName: "skip",
        abstract: "Skip scene time (finite scenes) and the music (--audio FILE), or go to the next or previous file.")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    // Taken as raw words so that a negative number is not read as an option.
    @Argument(parsing: .allUnrecognized, help: "Seconds, negative to go back (default 15); or next, or previous.")
    var what: [String] = []

    func validate() throws {
        guard what.count <= 1, what.allSatisfy({ Double($0)?.isFinite == true || $0 == "next" || $0 == "previous" }) else {
            throw ValidationError("skip takes one number of seconds (e.g. skip -15), or next, or previous")
        }
    }

    func run() throws {
        if let w = what.first, w == "next" || w == "previous" {
            try connection.call("POST", "/v1/skip", ["track": .string(w)])
        } else {
            try connection.call("POST", "/v1/skip", ["seconds": .number(what.first.flatMap(Double.init) ?? 15)])
        }
    }
}

struct CtlSet: CtlVerb {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set one widget property.",
        discussion: "Numbers, true/false and [lists] are sent as such, anything else as text (\\n is a line break).")
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Argument(help: "ID.PROPERTY, e.g. memo.text.") var property: String
    @Argument(help: "The value.") var value: String
    @Option(help: "Land on this frame (the timecode strip's number), in every output, rendition and recording at once.")
    var atFrame: Int64?
    @Option(help: "Land on the first frame at or past this scene time (seconds).")
    var atTime: Double?

    func validate() throws {
        guard let dot = property.firstIndex(of: "."), dot != property.startIndex, dot != property.index(before: property.endIndex) else {
            throw ValidationError("set takes ID.PROPERTY VALUE, e.g. set memo.text \"Hello\"")
        }
        if atFrame != nil && atTime != nil { throw ValidationError("give --at-frame or --at-time, not both") }
        if let atFrame, atFrame < 0 { throw ValidationError("--at-frame must be 0 or more, got \(atFrame)") }
        if let atTime, !(atTime.isFinite && atTime >= 0) { throw ValidationError("--at-time must be 0 or more seconds") }
    }

    func run() throws {
        let dot = property.firstIndex(of: ".")!
        let id = String(property[..<dot]), name = String(property[property.index(after: dot)...])
        var body: [String: JSONValue] = [name: JSONValue.parse(commandLine: value)]
        if let atFrame { body["at"] = .object(["frame": .number(Double(atFrame))]) }
        if let atTime { body["at"] = .object(["time": .number(atTime)]) }
        try connection.call("PATCH", "/v1/widgets/\(id)", body)
    }
}
