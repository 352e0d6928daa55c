/// A problem in a scene file, located: `file:line:column: key.path: what was expected`.
public struct SceneError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var column: Int
    /// The key path, e.g. `widgets[2].style.padding`; empty for syntax errors.
    public var path: String
    public var message: String

    public init(file: String, line: Int, column: Int, path: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
    }

    public var description: String {
        "\(file):\(line):\(column): " + (path.isEmpty ? "" : "\(path): ") + message
    }
}
