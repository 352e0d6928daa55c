/// A refused control request: the HTTP status and a message that names the problem.
public struct ControlError: Error, CustomStringConvertible, Sendable {
    public var status: Int
    public var message: String

    public init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }

    public static func bad(_ m: String) -> ControlError { ControlError(400, m) }
    public static func notFound(_ m: String) -> ControlError { ControlError(404, m) }
    public static func conflict(_ m: String) -> ControlError { ControlError(409, m) }
    public static func unprocessable(_ m: String) -> ControlError { ControlError(422, m) }
}
