import CompositorCore

/// A scene from its text, as a test writes one inline: `file` names it in messages, `folder` resolves its paths, and
/// `checks` are the media checks (none by default, as the core's tests have no GStreamer, Cairo or fontconfig; the
/// main package's tests pass `MediaChecksLive()` to check pictures, videos and fonts as the program does).
public func scene(_ yaml: String, file: String = "test.yaml", folder: String = ".",
                  checks: any MediaChecks = NoMediaChecks(), warn: (String) -> Void = { _ in }) throws -> Scene {
    try SceneLoader.parse(yaml, file: file, baseDirectory: folder, checks: checks, warn: warn)
}
