/// Builds the widget for a scene entry.
public enum WidgetFactory {
    public static func make(_ spec: Scene.WidgetSpec, warn: @escaping (String) -> Void) -> any Widget {
        switch spec.kind {
        case .clock(let c): return ClockWidget(id: spec.id, style: spec.style, config: c)
        case .ticker(let c): return TickerWidget(id: spec.id, style: spec.style, config: c)
        case .nowPlaying(let c): return NowPlayingWidget(id: spec.id, style: spec.style, config: c, warn: warn)
        case .image(let c): return ImageWidget(id: spec.id, style: spec.style, config: c, warn: warn)
        case .text(let c): return TextWidget(id: spec.id, style: spec.style, config: c)
        case .timecode: return TimecodeWidget(id: spec.id, style: spec.style)
        case .video(let c): return VideoWidget(id: spec.id, style: spec.style, config: c, warn: warn)
        }
    }
}
