import ArgumentParser
import Compositor
import Foundation

/// `pipcompose widgets`: every widget type and its keys, from the schemas themselves (what docs/SCENE.md shows).
struct WidgetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "widgets",
        abstract: "List the widget types a scene can use, with their keys (type, default, range, live).",
        discussion: "`--fill docs/SCENE.md` rewrites the tables between its <!-- keys:TYPE --> markers.")

    @Argument(help: "Only this type (default: all).")
    var type: String?

    @Option(help: "Rewrite the key tables in this Markdown file, between its <!-- keys:TYPE --> markers.")
    var fill: String?

    func validate() throws {
        if let type, WidgetTypes.named(type) == nil {
            throw ValidationError("unknown widget type '\(type)'; types: \(WidgetTypes.names.joined(separator: ", "))")
        }
    }

    func run() throws {
        if let fill {
            guard let text = try? String(contentsOfFile: fill, encoding: .utf8) else {
                throw UserError("cannot read \(fill)")
            }
            let filled = WidgetTypes.fillMarkdown(text)
            if filled != text {
                do { try filled.write(toFile: fill, atomically: true, encoding: .utf8) } catch {
                    throw UserError("cannot write \(fill): \(error.localizedDescription)")
                }
            }
            say(filled == text ? "\(fill): up to date" : "\(fill): key tables rewritten")
            return
        }
        for schema in WidgetTypes.all where type == nil || schema.type == type {
            say("## \(schema.type): \(schema.summary)\n\n" + WidgetTypes.markdown(schema))
        }
    }
}
