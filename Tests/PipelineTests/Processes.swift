import Foundation
import TestSupport

/// Runs a program found on PATH to completion.
@discardableResult
func runTool(_ arguments: [String]) throws -> (status: Int32, stderr: String, stdout: String) {
    let r = try runProgram("/usr/bin/env", arguments)
    return (r.status, r.stderr, r.stdout)
}
