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

    /// A scene-independent cover picture, so the demo has artwork without any file.
    public static let coverSVG = """
    <svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">
      <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
        <stop offset="0" stop-color="#ff7a59"/><stop offset="1" stop-color="#7b2ff7"/></linearGradient></defs>
      <rect width="512" height="512" rx="40" fill="url(#g)"/>
      <circle cx="256" cy="256" r="150" fill="#111"/>
      <circle cx="256" cy="256" r="110" fill="none" stroke="#333" stroke-width="6"/>
      <circle cx="256" cy="256" r="70" fill="none" stroke="#333" stroke-width="6"/>
      <circle cx="256" cy="256" r="40" fill="#f4d35e"/>
      <circle cx="256" cy="256" r="8" fill="#111"/>
    </svg>
    """

    public static func load(warn: (String) -> Void = { _ in }) -> Scene {
        do {
            return try SceneLoader.parse(yaml, file: "demo", warn: warn)
        } catch {
            preconditionFailure("the built-in demo scene does not parse: \(error)")
        }
    }
}
