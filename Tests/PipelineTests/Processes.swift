import Foundation

/// Runs a program to completion and returns its exit status and standard error.
@discardableResult
func runTool(_ arguments: [String], stdin: String? = nil) throws -> (status: Int32, stderr: String, stdout: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = arguments
    let err = Pipe(), out = Pipe()
    p.standardError = err
    p.standardOutput = out
    p.standardInput = FileHandle.nullDevice
    try p.run()
    // Read both pipes to the end before waiting, so a chatty child never blocks on a full pipe.
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
    let errData = errBox.data
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: errData, as: UTF8.self), String(decoding: outData, as: UTF8.self))
}

final class TempDir {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "pipcompose-pipeline-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
}
