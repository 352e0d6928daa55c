import Foundation

/// `run --hls DIR [--hls-window S]`: an HLS ladder, one rung for the main picture and one per rendition, each a
/// media playlist of 1 s segments in `DIR/RUNG/`, and `DIR/master.m3u8` naming them all.
public struct HLSSettings: Sendable, Equatable {
    public var folder: String
    /// Seconds of segments each playlist lists and the folder keeps (its on-disk window).
    public var windowSeconds: Int

    public init(folder: String, windowSeconds: Int = HLSSettings.defaultWindow) {
        self.folder = folder
        self.windowSeconds = windowSeconds
    }

    public static let defaultWindow = 60
    public static let windowRange = 3...3600

    /// The folder, created when it does not exist (its parent must), refused when it holds anything: a ladder never
    /// writes over files it did not make.
    public static func check(_ folder: String, window: Int = defaultWindow) throws(OutputSpec.Invalid) -> HLSSettings {
        guard windowRange.contains(window) else {
            throw OutputSpec.Invalid(description: "--hls-window must be \(windowRange.lowerBound)...\(windowRange.upperBound) "
                                     + "seconds, got \(window)")
        }
        let path = URL(fileURLWithPath: folder).standardizedFileURL.path
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else {
                throw OutputSpec.Invalid(description: "--hls '\(folder)': that is a file; give a folder (empty, or one to create)")
            }
            let inside = (try? fm.contentsOfDirectory(atPath: path)) ?? []
            guard inside.isEmpty else {
                throw OutputSpec.Invalid(description: "--hls '\(folder)': the folder is not empty (\(inside.sorted().prefix(3).joined(separator: ", "))…); "
                                         + "give an empty or new folder: a ladder never writes over files")
            }
            guard fm.isWritableFile(atPath: path) else {
                throw OutputSpec.Invalid(description: "--hls '\(folder)': the folder is not writable")
            }
        } else {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard fm.fileExists(atPath: parent, isDirectory: &isDir), isDir.boolValue else {
                throw OutputSpec.Invalid(description: "--hls '\(folder)': folder '\(parent)' does not exist; create it first")
            }
            guard fm.isWritableFile(atPath: parent) else {
                throw OutputSpec.Invalid(description: "--hls '\(folder)': folder '\(parent)' is not writable")
            }
        }
        return HLSSettings(folder: path, windowSeconds: window)
    }

    /// The rung's folder name: `main` for the main picture (its size can change), `WxH` for a rendition.
    public static func rung(_ rendition: PixelSize?) -> String { rendition.map { "\($0)" } ?? "main" }

    /// Segments a playlist lists, and files the folder keeps (one more, for a player still reading the oldest).
    public var playlistLength: Int { max(3, windowSeconds) }
    public var maxFiles: Int { playlistLength + 1 }
}
