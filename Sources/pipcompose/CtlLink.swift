import ArgumentParser
import Compositor
import Foundation

struct CtlLink: CtlVerb {
    static let configuration = CommandConfiguration(
        commandName: "link", abstract: "Watch links: make one (create), list them with their viewers (list), end one (revoke ID).",
        discussion: """
        A watch link lets a viewer watch (the page without its controls, WHEP, the HLS ladder, RTSP as the password \
        of --rtsp-user) and nothing more; the control token drives. Revoking a link ends every session it opened.
        pipcompose ctl link create --expires 2h --label grandma   (prints the link's page and HLS URLs as JSON)
        pipcompose ctl link list
        pipcompose ctl link revoke w2
        """)
    @ParentCommand var ctl: CtlCommand
    @OptionGroup var own: ControlOptions
    @Argument(help: "create, list or revoke.") var action: Action
    @Argument(help: "revoke: the link's id (as list shows it).") var id: String?
    @Option(help: "create: how long it lasts, e.g. 90s, 45m, 2h, 7d (default: until revoked or the run ends).")
    var expires: String?
    @Option(help: "create: a name to tell it by in the list.") var label: String?

    enum Action: String, ExpressibleByArgument { case create, list, revoke }

    func validate() throws {
        switch action {
        case .revoke where id == nil:
            throw ValidationError("revoke needs the link's id: pipcompose ctl link revoke ID (ctl link list shows them)")
        case .create, .list:
            if id != nil { throw ValidationError("\(action.rawValue) takes no id") }
        default: break
        }
        if action != .create && (expires != nil || label != nil) {
            throw ValidationError("--expires and --label are for create")
        }
        if let expires {
            do { _ = try WatchLinks.duration(expires) } catch { throw ValidationError(error.message) }
        }
    }

    func run() throws {
        switch action {
        case .create:
            var body: [String: JSONValue] = [:]
            if let expires { body["expires"] = .string(expires) }
            if let label { body["label"] = .string(label) }
            try connection.call("POST", "/v1/links", body)
        case .list:
            try connection.call("GET", "/v1/links")
        case .revoke:
            try connection.call("DELETE", "/v1/links/\(id!.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id!)")
        }
    }
}
