import Foundation
import Yams

/// Reads one YAML node with its key path and position, so every complaint says where and what was expected.
public struct NodeReader {
    let node: Node
    let path: String
    let file: String

    var line: Int { node.mark?.line ?? 1 }
    var column: Int { node.mark?.column ?? 1 }

    func error(_ message: String) -> SceneError {
        SceneError(file: file, line: line, column: column, path: path, message: message)
    }

    func child(_ key: String, _ value: Node) -> NodeReader {
        NodeReader(node: value, path: path.isEmpty ? key : "\(path).\(key)", file: file)
    }

    /// What a node is, in a user's words, for "got …" in messages.
    var shown: String {
        switch node {
        case .scalar(let s): return "'\(s.string.count > 40 ? String(s.string.prefix(40)) + "…" : s.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// The mapping's entries after checking every key is one of `allowed`. An unknown key is named with the valid
    /// ones, the nearest of them when it looks like a misspelling, and what `hint` says of it (where it belongs).
    func mapping(allowed: [String], what: String, hint: (String) -> String? = { _ in nil }) throws(SceneError) -> [String: NodeReader] {
        guard case .mapping(let m) = node else {
            throw error("expected a mapping (key: value lines) for \(what), got \(shown)")
        }
        var out: [String: NodeReader] = [:]
        for (k, v) in m {
            guard let key = k.string else {
                throw NodeReader(node: k, path: path, file: file).error("keys must be plain names")
            }
            guard allowed.contains(key) else {
                let near = NearestName.to(key, in: allowed).map { " (did you mean '\($0)'?)" } ?? ""
                let more = hint(key).map { "; \($0)" } ?? ""
                throw NodeReader(node: k, path: path, file: file)
                    .error("unknown key '\(key)' in \(what)\(near); valid keys: \(allowed.joined(separator: ", "))\(more)")
            }
            out[key] = child(key, v)
        }
        return out
    }

    /// The entry `key` of a mapping, unchecked; nil for another node or a missing key.
    func entry(_ key: String) -> NodeReader? {
        guard case .mapping(let m) = node, let v = m[Node(key)] else { return nil }
        return child(key, v)
    }

    func list() throws(SceneError) -> [NodeReader] {
        guard case .sequence(let s) = node else { throw error("expected a list, got \(shown)") }
        return s.enumerated().map { NodeReader(node: $0.element, path: "\(path)[\($0.offset)]", file: file) }
    }

    func string() throws(SceneError) -> String {
        guard case .scalar(let s) = node else { throw error("expected text, got \(shown)") }
        return s.string
    }

    func double(in range: ClosedRange<Double>, unit: String = "") throws(SceneError) -> Double {
        guard case .scalar(let s) = node, let v = Double(s.string.trimmingCharacters(in: .whitespaces)),
              v.isFinite else {
            throw error("expected a number in \(describe(range))\(unit), got \(shown)")
        }
        guard range.contains(v) else { throw error("must be in \(describe(range))\(unit), got \(s.string)") }
        return v
    }

    func int(in range: ClosedRange<Int>) throws(SceneError) -> Int {
        guard case .scalar(let s) = node, let v = Int(s.string.trimmingCharacters(in: .whitespaces)) else {
            throw error("expected a whole number in \(range.lowerBound)...\(range.upperBound), got \(shown)")
        }
        guard range.contains(v) else {
            throw error("must be in \(range.lowerBound)...\(range.upperBound), got \(v)")
        }
        return v
    }

    func bool() throws(SceneError) -> Bool {
        guard case .scalar(let s) = node else { throw error("expected true or false, got \(shown)") }
        switch s.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error("expected true or false, got \(shown)")
        }
    }

    func color() throws(SceneError) -> Color {
        let s = try string()
        guard let c = Color(parsing: s) else { throw error("'\(s)' is not a colour; expected \(Color.syntaxHelp)") }
        return c
    }

    func oneOf<T>(_ choices: [String: T]) throws(SceneError) -> T {
        let s = try string()
        guard let v = choices[s.lowercased()] else {
            throw error("'\(s)' is not one of: \(choices.keys.sorted().joined(separator: ", "))")
        }
        return v
    }

    /// A list of strings, or a single string taken as a list of one.
    func strings() throws(SceneError) -> [String] {
        if case .scalar = node { return [try string()] }
        var out: [String] = []
        for item in try list() { out.append(try item.string()) }
        return out
    }

    private func describe(_ r: ClosedRange<Double>) -> String {
        func f(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v) }
        if r.upperBound == .greatestFiniteMagnitude { return "\(f(r.lowerBound)) or more" }
        return "\(f(r.lowerBound))...\(f(r.upperBound))"
    }
}
