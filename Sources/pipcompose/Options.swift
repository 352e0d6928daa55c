import ArgumentParser
import Compositor
import Foundation

/// Prints a warning the way every subcommand does.
func printWarning(_ message: String) {
    let text = message.hasPrefix("warning:") || message.contains(": warning:") ? message : "warning: \(message)"
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Prints a line (or lines) to standard output at once, for scripts and tests reading it as it comes.
/// Written straight to the file descriptor, not through stdio: `fflush(NULL)` would also take stdin's lock,
/// which the thread blocked in `readLine` holds, and so wait for the next line of input.
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Prints a line of the running log to standard error as it is.
func printLog(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// An error shown to the user as it is, without a stack trace.
struct UserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Loads the scene argument, or the demo scene when there is none.
func loadScene(_ path: String?) throws -> Scene {
    guard let path else { return DemoScene.load(warn: printWarning) }
    do { return try SceneLoader.load(path: path, warn: printWarning) } catch { throw UserError(error.description) }
}

extension ParsableCommand {
    /// Options checked in `run()` (those that need the scene or each other) are reported as a bad option of this
    /// command, with its usage, as if `validate()` had found them.
    func checked<T>(_ parse: () throws -> T) throws -> T {
        do { return try parse() } catch let e as ValidationError {
            // A default subcommand (soak's run) is known by its parent's name.
            let name = Self.self == SoakRunCommand.self ? "soak" : Self.configuration.commandName ?? ""
            FileHandle.standardError.write(Data("Error: \(e.message)\n  See 'pipcompose \(name) --help' for the options.\n".utf8))
            throw ExitCode.validationFailure
        }
    }
}
