import Foundation

/// A clock label: the time in a pattern and an IANA timezone, with an optional date line under it.
public final class ClockWidget: WidgetBase, Widget {
    public typealias Config = ClockConfig

    public private(set) var config: Config
    private let timeFormatter = DateFormatter()
    private let dateFormatter = DateFormatter()
    private var engine: TextEngine?
    private var timeBox = Rect.zero
    private var dateBox: Rect?
    private(set) var timeSize = 10.0
    private var dateSize = 10.0
    private var cache: [String: TextLayout] = [:]
    /// The texts shown from `from` until `until` (the next instant they change): formatting a date costs ICU
    /// work every frame otherwise, and a clock without milliseconds changes once a second.
    private var shown: (from: Date, until: Date, time: String, date: String?)?
    /// The smallest unit the patterns show, in seconds.
    private var step = 1.0

    public init(id: String, style: Style, config: Config) {
        self.config = config
        super.init(id: id, style: style)
        configureFormatters()
    }

    /// Changes the zone at run time (control API); the next frame shows it.
    public func setTimezone(_ zone: String?) {
        config.timezone = zone
        configureFormatters()
        version += 1
    }

    private func configureFormatters() {
        let zone = config.timezone.flatMap(TimeZone.init(identifier:)) ?? TimeZone.current
        for (f, pattern) in [(timeFormatter, config.format), (dateFormatter, config.dateFormat ?? "")] {
            f.locale = Locale(identifier: config.locale)
            f.timeZone = zone
            f.dateFormat = pattern
        }
        cache = [:]
        shown = nil
        let letters = Set(Self.patternLetters(config.format + (config.dateFormat ?? "")))
        if letters.contains("S") { step = 0.001 }
        else if letters.contains("s") { step = 1 }
        else if letters.contains("m") { step = 60 }
        else if !letters.isDisjoint(with: ["h", "H", "k", "K", "a"]) { step = 3600 }
        else { step = 86400 }
    }

    /// Both lines' texts at `date`, formatted again only when the last ones no longer apply.
    private func texts(at date: Date) -> (time: String, date: String?) {
        if let s = shown, date >= s.from, date < s.until { return (s.time, s.date) }
        let t = timeText(at: date), d = dateText(at: date)
        shown = (date, nextChange(after: date), t, d)
        return (t, d)
    }

    /// The time line's text at `date`.
    public func timeText(at date: Date) -> String { timeFormatter.string(from: date) }
    /// The date line's text at `date`, when the clock has one.
    public func dateText(at date: Date) -> String? {
        config.dateFormat == nil ? nil : dateFormatter.string(from: date)
    }

    /// The first instant after `date` at which the clock's text changes: the next whole second, minute, hour
    /// or day in the clock's zone, from the smallest unit the patterns show.
    public func nextChange(after date: Date) -> Date {
        let offset = Double(timeFormatter.timeZone.secondsFromGMT(for: date))
        let local = date.timeIntervalSince1970 + offset
        let next = ((local / step).rounded(.down) + 1) * step
        return Date(timeIntervalSince1970: next - offset)
    }

    /// Pattern letters outside quoted literals.
    static func patternLetters(_ pattern: String) -> [Character] {
        var quoted = false
        var out: [Character] = []
        for c in pattern {
            if c == "'" { quoted.toggle(); continue }
            if !quoted && c.isLetter { out.append(c) }
        }
        return out
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
        self.engine = engine
        cache = [:]
        let c = content
        // A date line only when there is room for two readable lines.
        if config.dateFormat != nil && c.height >= 40 {
            timeBox = Rect(x: c.x, y: c.y, width: c.width, height: c.height * 0.64)
            dateBox = Rect(x: c.x, y: c.y + c.height * 0.66, width: c.width, height: c.height * 0.34)
        } else {
            timeBox = c
            dateBox = nil
        }
        // Size the type on a sample of the widest digits so the size does not change from second to second.
        let sample = Date(timeIntervalSince1970: 1_700_000_000 + 8 * 3600 + 48 * 60 + 38)
        timeSize = fit(timeText(at: sample), in: timeBox, engine: engine)
        if let dateBox, let text = dateText(at: sample) { dateSize = fit(text, in: dateBox, engine: engine) }
        // Record the boxes for the sample so layout checks see them without drawing.
        recordLine(timeText(at: sample), size: timeSize, in: timeBox, secondary: false)
        if let dateBox, let text = dateText(at: sample) { recordLine(text, size: dateSize, in: dateBox, secondary: true) }
    }

    private func fit(_ text: String, in rect: Rect, engine: TextEngine) -> Double {
        let maxSize = style.fontSize.map { $0 * scale } ?? rect.height
        // A time is never cut short: "15:49:…" tells nothing. It shrinks to fit the box's width instead.
        return TextLayout.fitting(engine: engine, text: text, font: style.font, box: rect, maxSize: maxSize, whole: true).pixelSize
    }

    /// A line's layout, shaped once per text (the last few are kept), and where it is drawn in `rect`.
    private func line(_ text: String, size: Double, in rect: Rect, secondary: Bool) -> (TextLayout, Double, Double)? {
        guard let engine else { return nil }
        let key = "\(secondary ? "d" : "t")|\(text)"
        let layout = cache[key] ?? TextLayout(engine: engine, text: text, font: style.font, pixelSize: size,
                                               width: rect.width, alignment: .center)
        if cache[key] == nil {
            if cache.count > 8 { cache = [:] }
            cache[key] = layout
        }
        return (layout, rect.x, rect.y + (rect.height - layout.height) / 2)
    }

    @discardableResult
    private func recordLine(_ text: String, size: Double, in rect: Rect, secondary: Bool) -> (TextLayout, Double, Double)? {
        guard let placed = line(text, size: size, in: rect, secondary: secondary) else { return nil }
        record(placed.0, x: placed.1, y: placed.2)
        return placed
    }

    /// When only the time line's text changed (the date line and the settings did not): the pixels of the old text
    /// and of the new one, not the whole box. A clock's box is mostly empty panel and date line, and redrawing it
    /// whole once a second cost more than the rest of that second's frames of the demo together.
    ///
    /// The region is each text's inked box and two pixels of smoothing around it. A clip that cuts the panel's rounded
    /// corners or its border may smooth their pixels differently from a whole redraw, so near them it is the whole box.
    public func changedRegions(from old: Appearance, to new: Appearance) -> [Rect]? {
        guard old.a == new.a, old.detail == new.detail, old.text != new.text,
              let before = line(old.text, size: timeSize, in: timeBox, secondary: false),
              let after = line(new.text, size: timeSize, in: timeBox, secondary: false) else { return nil }
        func inked(_ placed: (TextLayout, Double, Double)) -> Rect {
            let r = placed.0.inkRect
            return Rect(x: placed.1 + r.x, y: placed.2 + r.y, width: r.width, height: r.height)
        }
        let region = inked(before).union(inked(after)).inset(-2)
        let edge = max(style.cornerRadius, style.border == nil ? 0 : 2) * scale + 1
        return box.inset(edge).contains(region, tolerance: 0) ? [region] : nil
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        drawPanel(on: canvas)
        textBoxes = []
        let (timeLine, dateLine) = texts(at: time.wall)
        if let (layout, x, y) = recordLine(timeLine, size: timeSize, in: timeBox, secondary: false) {
            layout.draw(on: canvas, x: x, y: y, color: style.color)
        }
        if let dateBox, let text = dateLine,
           let (layout, x, y) = recordLine(text, size: dateSize, in: dateBox, secondary: true) {
            layout.draw(on: canvas, x: x, y: y, color: style.secondaryColor)
        }
    }

    public func appearance(at time: FrameTime) -> Appearance {
        let (timeLine, dateLine) = texts(at: time.wall)
        return Appearance(Int64(version), text: timeLine, detail: dateLine ?? "")
    }
}

extension ClockWidget {
    /// A live update, checked by `ClockConfig.change`, on the render thread.
    public func apply(_ change: any WidgetChange, at media: Double) {
        if let c = change as? ClockConfig.Change { setTimezone(c.timezone) }
    }
}

extension ClockConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        ClockWidget(id: id, style: style, config: self)
    }
}
