import Foundation

/// A temporary directory removed when the test ends.
public final class TempDir {
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "pipcompose-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ name: String) -> String { path + "/" + name }

    public func write(_ name: String, _ text: String) throws -> String {
        let p = file(name)
        try text.write(toFile: p, atomically: true, encoding: .utf8)
        return p
    }
}

/// What a finished program printed.
public struct Run: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs a program to completion, reading both pipes to the end so a chatty child never blocks.
public func runProgram(_ executable: String, _ arguments: [String]) throws -> Run {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    try p.run()
    /// `@unchecked Sendable`: written by the reader thread before `group.leave()`, read after `group.wait()`.
    final class Box: @unchecked Sendable { var data = Data() }
    let errBox = Box()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errBox.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    p.waitUntilExit()
    return Run(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
               stderr: String(decoding: errBox.data, as: UTF8.self))
}
