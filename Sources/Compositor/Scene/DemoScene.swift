/// The built-in scene `run` and `snapshot` use when no scene is given: a clock, a now-playing card and a
/// flowing memo, in the spirit of the iOS PiP demos it comes from (Japanese text included).
public enum DemoScene {
    public static let yaml = """
    title: pipcompose demo
    size: 1280x720
    fps: 30
    background:
      gradient: ["#0b1a2e", "#1d3557"]
      angle: 90
    widgets:
      - id: clock
        type: clock
        format: "HH:mm:ss"
        date: "EEEE d MMMM yyyy"
        place: {edge: top, size: 0.24, portrait: {size: 0.16}}
        style: {bold: true, padding: 8}
      - id: memo
        type: ticker
        items:
          - "pipcompose — live widgets over RTSP"
          - "今日の予定: 10時 打ち合わせ、15時 レビュー"
          - "天气晴朗 ☀️ 气温 22°C"
          - "مرحبا بالعالم"
          - "🎬 Now streaming 🎧"
        speed: 140
        place: {edge: bottom, size: 0.11}
        style: {background: "#00000099", padding: 6}
      - id: nowplaying
        type: nowplaying
        title: "Clair de Lune"
        artist: "Claude Debussy"
        album: "Suite bergamasque"
        artwork: "builtin:cover"
        duration: 300
        position: 42
        playing: true
        place: fill
        style: {background: "#ffffff14", radius: 18, padding: 18}
    """

    public static func load(warn: (String) -> Void = { _ in }) -> Scene {
        do {
            return try SceneLoader.parse(yaml, file: "demo", warn: warn)
        } catch {
            preconditionFailure("the built-in demo scene does not parse: \(error)")
        }
    }
}
