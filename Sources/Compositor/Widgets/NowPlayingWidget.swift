import Foundation

/// The now-playing card: artwork, title, artist, album, a progress bar with elapsed and remaining time, and
/// a playing/paused glyph. Position advances with scene time while playing.
///
/// It re-lays by size: landscape puts artwork left of the text, portrait puts it on top; as the box shrinks
/// the artwork goes first, then the album line, then the artist line, then the progress row.
public final class NowPlayingWidget: WidgetBase, Widget {
    public typealias Config = NowPlayingConfig

    enum Line: Hashable { case title, artist, album, progress }

    public private(set) var config: Config
    private var anchor = 0.0
    private var artwork: Picture?
    private var artworkFailed = false
    private var engine: TextEngine?
    /// What the last layout decided.
    public private(set) var artBox: Rect?
    public private(set) var shownLines: [String] = []
    private var lineBoxes: [(Line, Rect)] = []
    private var layouts: [Line: TextLayout] = [:]
    /// Where each text line may put pixels: its box, and its ink where a glyph reaches past it (tall marks).
    private var reach: [Line: Rect] = [:]
    private var timeSize = 10.0
    private let warn: (String) -> Void

    /// The smallest text worth drawing, in pixels.
    static let minimumText = 8.0

    public init(id: String, style: Style, config: Config, warn: @escaping (String) -> Void) {
        self.config = config
        self.warn = warn
        super.init(id: id, style: style)
        loadArtwork()
    }

    private func loadArtwork() {
        artwork = nil
        artworkFailed = false
        guard let path = config.artwork, !path.isEmpty else { return }
        do { artwork = try Picture.load(path: path) } catch {
            artworkFailed = true
            warn("widget '\(id)': \(error); drawing a placeholder")
        }
    }

    /// New metadata at scene time `t`; position restarts from `config.position` at `t`.
    public func update(_ new: Config, at t: Double) {
        let artChanged = new.artwork != config.artwork
        config = new
        anchor = t
        if artChanged { loadArtwork() }
        version += 1
        if let engine { layout(box: box, frame: frameSize, engine: engine) }
    }

    /// Position in seconds at scene time `t`.
    public func position(at t: Double) -> Double {
        let p = config.playing ? config.position + (t - anchor) : config.position
        return config.duration > 0 ? min(max(0, p), config.duration) : max(0, p)
    }

    private var frameSize = PixelSize(width: 1280, height: 720)

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
        self.engine = engine
        frameSize = frame
        layouts = [:]
        reach = [:]
        shownTimes = [:]
        lineBoxes = []
        let c = content
        let gap = max(2, 12 * scale)
        let portrait = c.height > c.width * 1.2
        // Lines by priority; weights are relative line heights.
        var all: [(Line, Double)] = [(.title, 1.5)]
        if !config.artist.isEmpty { all.append((.artist, 1.0)) }
        if !config.album.isEmpty { all.append((.album, 1.0)) }
        if config.duration > 0 { all.append((.progress, 0.9)) }
        let unitGap = 0.25
        func unit(_ ls: [(Line, Double)], in text: Rect) -> Double {
            let weights = ls.reduce(0) { $0 + $1.1 }
            return text.height / (weights + unitGap * Double(ls.count - 1))
        }
        // Drop album, then artist, then progress, while lines would be too small to read.
        func fitLines(in text: Rect) -> [(Line, Double)] {
            var lines = all
            for drop in [Line.album, .artist, .progress]
            where unit(lines, in: text) * 0.8 < Self.minimumText && lines.count > 1 {
                lines.removeAll { $0.0 == drop }
            }
            return lines
        }
        var text = c
        var lines = fitLines(in: c)
        artBox = nil
        if config.artwork != nil {
            var art: Rect?
            var beside = c
            // Beside the text when the box is wide enough, else on top of it (portrait and square boxes).
            if c.height >= 32 && c.width - c.height - gap >= c.height * 1.5 {
                art = Rect(x: c.x, y: c.y, width: c.height, height: c.height)
                beside = Rect(x: c.x + c.height + gap, y: c.y, width: c.width - c.height - gap, height: c.height)
            } else {
                let side = min(c.width, c.height * 0.5)
                if side >= 32 && c.height - side - gap >= 2 * 14 {
                    art = Rect(x: c.x + (c.width - side) / 2, y: c.y, width: side, height: side)
                    beside = Rect(x: c.x, y: c.y + side + gap, width: c.width, height: c.height - side - gap)
                }
            }
            // Artwork goes before any line does.
            let withArt = fitLines(in: beside)
            if let art, withArt.count == all.count {
                artBox = art
                text = beside
                lines = withArt
            }
        }
        var u = unit(lines, in: text)
        if let cap = style.fontSize.map({ $0 * scale / 0.8 }) { u = min(u, cap) }
        let used = lines.reduce(0) { $0 + $1.1 * u } + unitGap * u * Double(lines.count - 1)
        var y = text.y + max(0, (text.height - used) / 2)
        shownLines = []
        let stacked = artBox.map { $0.maxY < text.minY } ?? portrait
        let align: TextLayout.Alignment = stacked ? .center : .leading
        for (line, weight) in lines {
            let h = weight * u
            let rect = Rect(x: text.x, y: y, width: text.width, height: h)
            lineBoxes.append((line, rect))
            y += h + unitGap * u
            let str: String
            switch line {
            case .title: str = config.title
            case .artist: str = config.artist
            case .album: str = config.album
            case .progress:
                timeSize = max(4, (h * 0.62).rounded(.down))
                shownLines.append("progress")
                continue
            }
            shownLines.append(str)
            var font = style.font
            if line == .title { font.bold = true }
            let l = TextLayout(engine: engine, text: str, font: font, pixelSize: max(4, (h * 0.8).rounded(.down)),
                               width: rect.width, alignment: align)
            layouts[line] = l
            let ty = rect.y + (rect.height - l.height) / 2
            record(l, x: rect.x, y: ty)
            let ink = l.inkRect
            reach[line] = rect.union(Rect(x: rect.x + ink.x, y: ty + ink.y, width: ink.width, height: ink.height))
        }
        timeSample = widestTime(engine: engine)
        barTrack = measureBarTrack()
        if let r = lineBoxes.first(where: { $0.0 == .progress })?.1, timeSize >= 7 {
            let sample = timeLayout(timeSample, engine: engine)
            let y = r.y + (r.height - sample.height) / 2
            let glyph = r.height
            record(sample, x: r.x + glyph + gap / 2, y: y)
            record(sample, x: r.maxX - sample.width, y: y)
        }
    }

    private func timeLayout(_ s: String, engine: TextEngine) -> TextLayout {
        TextLayout(engine: engine, text: s, font: style.font, pixelSize: timeSize)
    }

    /// The widest text a time of this track can be: the remaining time with the font's widest digit in every place
    /// ("-8:88:88" in most fonts for a track of an hour or more). The bar leaves this much room on each side, so a
    /// time never runs into it, and the row can be redrawn one part at a time (`changedRegions`).
    private var timeSample = "-88:88"

    private func widestTime(engine: TextEngine) -> String {
        let digit = (0...9).map { String($0) }.map { ($0, timeLayout($0, engine: engine).width) }.max { $0.1 < $1.1 }?.0 ?? "8"
        let hours = Int(max(0, config.duration).rounded(.up)) / 3600
        let places = hours > 0 ? String(repeating: digit, count: String(hours).count) + ":" : ""
        return "-" + places + digit + digit + ":" + digit + digit
    }

    /// The time texts the progress row last drew, by text: a redraw that takes in a time that did not change does not
    /// shape it again. Over a video layer the card is drawn whole with every new video frame,
    /// while each time changes once a second. Holds at most the two the row shows; emptied by `layout`.
    private var shownTimes: [String: TextLayout] = [:]

    /// The remaining time shown at `pos`: the track's length, rounded up to a second, less the elapsed seconds shown.
    /// The two times add up to the length and change on the same frame (one redraw of the row a second, not two);
    /// counted down from the length's own seconds, the remaining time shows -0:01 through the last second.
    func remainingSeconds(_ pos: Double) -> Int {
        max(0, Int(max(0, config.duration).rounded(.up)) - Int(max(0, pos).rounded(.down)))
    }

    static func clock(_ seconds: Double) -> String {
        // Built by hand: String(format:) goes through Foundation's formatter, and this runs every frame.
        let s = max(0, Int(seconds.rounded(.down)))
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        drawPanel(on: canvas)
        // Most redraws are a part of the progress row (`changedRegions`): what puts no pixel inside the clip is skipped.
        let clip = canvas.clipExtents
        if let artBox, artBox.intersection(clip) != nil {
            if let artwork { artwork.draw(on: canvas, in: artBox, fit: .fill) }
            else { canvas.placeholder(artBox, style.secondaryColor) }
        }
        for (line, rect) in lineBoxes where (reach[line] ?? rect).intersection(clip) != nil {
            if line == .progress {
                drawProgress(on: canvas, in: rect, clip: clip, at: time)
                continue
            }
            guard let l = layouts[line] else { continue }
            let y = rect.y + (rect.height - l.height) / 2
            l.draw(on: canvas, x: rect.x, y: y, color: line == .title ? style.color : style.secondaryColor)
        }
    }

    /// The progress bar's track for the current layout: after the glyph and elapsed time, before the remaining
    /// time; the whole row after the glyph when the times are too small to show.
    /// Computed once per layout: it shapes a sample text, too costly for every frame's appearance check.
    private var barTrack: Rect?

    private func measureBarTrack() -> Rect? {
        guard let r = lineBoxes.first(where: { $0.0 == .progress })?.1, let engine else { return nil }
        let gap = max(2, 12 * scale) / 2
        let sampleWidth = timeSize >= 7 ? timeLayout(timeSample, engine: engine).width + gap : 0
        let x0 = r.x + r.height + gap + sampleWidth
        let x1 = r.maxX - sampleWidth
        guard x1 - x0 > 4 else { return nil }
        let barH = max(2, r.height * 0.22)
        return Rect(x: x0, y: r.y + (r.height - barH) / 2, width: x1 - x0, height: barH)
    }

    /// Filled width of the bar in whole pixels: drawn and compared exactly the same way.
    private func filledPixels(_ track: Rect, position pos: Double) -> Double {
        (track.width * (config.duration > 0 ? min(1, pos / config.duration) : 0)).rounded()
    }

    private func drawProgress(on canvas: Canvas, in r: Rect, clip: Rect, at time: FrameTime) {
        guard let engine else { return }
        let pos = position(at: time.media)
        let gap = max(2, 12 * scale) / 2
        // Glyph: a triangle while playing, two bars while paused; drawn as shapes so no font can miss them.
        let g = r.height * 0.7
        let gy = r.y + (r.height - g) / 2
        if config.playing && !time.paused {
            canvas.fillPolygon([(r.x, gy), (r.x + g * 0.87, gy + g / 2), (r.x, gy + g)], style.color)
        } else {
            canvas.fill(Rect(x: r.x, y: gy, width: g * 0.3, height: g), style.color)
            canvas.fill(Rect(x: r.x + g * 0.55, y: gy, width: g * 0.3, height: g), style.color)
        }
        // Below 7 px the times are unreadable: the bar takes the whole row.
        // Each time stays on its side of the bar (`timeSample`): one outside the clip is not drawn (nor shaped).
        let bar = barTrack
        if timeSize >= 7 {
            var kept: [String: TextLayout] = [:]
            func show(_ text: String, from x0: Double, to x1: Double, at x: (TextLayout) -> Double) {
                guard Rect(x: x0, y: r.y, width: x1 - x0, height: r.height).intersection(clip) != nil else { return }
                let l = shownTimes[text] ?? timeLayout(text, engine: engine)
                kept[text] = l
                l.draw(on: canvas, x: x(l), y: r.y + (r.height - l.height) / 2, color: style.secondaryColor)
            }
            show(Self.clock(pos), from: r.x, to: bar?.x ?? r.maxX) { _ in r.x + r.height + gap }
            show("-" + Self.clock(Double(remainingSeconds(pos))), from: bar?.maxX ?? r.x, to: r.maxX) { r.maxX - $0.width }
            shownTimes = kept
        }
        guard let bar else { return }
        canvas.fillRounded(bar, radius: bar.height / 2, style.secondaryColor.withAlpha(0.35))
        let filled = filledPixels(bar, position: pos)
        if filled > 0 {
            canvas.fillRounded(Rect(x: bar.x, y: bar.y, width: filled, height: bar.height), radius: bar.height / 2,
                               style.accent)
        }
    }

    /// When only the position moved, only what moved in the progress row: the elapsed time (left of the bar), the
    /// remaining time (right of it), the end of the filled bar. The bar grows a pixel a few times a second and the
    /// times change once a second, together, so most redraws of the card are a few pixels of the bar.
    ///
    /// No edge of these parts cuts a rounded end of the bar: where a clip cuts a curve, Cairo's smoothing of the
    /// pixels beside the cut may differ by a step from a whole redraw's (seen at 640x360). The times' parts end on
    /// whole pixels short of the bar (each time is a gap away from it), and the bar's part takes in a whole end
    /// when it would reach into it.
    public func changedRegions(from old: Appearance, to new: Appearance) -> [Rect]? {
        guard old.d == new.d, let row = lineBoxes.first(where: { $0.0 == .progress })?.1 else { return nil }
        guard let bar = barTrack else { return [row] }
        var regions: [Rect] = []
        if old.a != new.a {
            regions.append(Rect(x: row.x, y: row.y, width: bar.minX.rounded(.down) - row.x, height: row.height))
        }
        if old.b != new.b {
            let x = bar.maxX.rounded(.up)
            regions.append(Rect(x: x, y: row.y, width: row.maxX - x, height: row.height))
        }
        if old.c != new.c {
            // From the shorter fill's rounded end (a bar's height before its end, and a pixel of smoothing) to a pixel
            // past the longer one's.
            let cap = bar.height / 2 + 1
            var from = Double(min(old.c, new.c)) - bar.height - 1, to = Double(max(old.c, new.c)) + 1
            if from < cap { from = 0 }
            if to > bar.width - cap { to = bar.width }
            regions.append(Rect(x: bar.x + from, y: bar.y, width: to - from, height: bar.height))
        }
        return regions.isEmpty ? [row] : regions
    }

    public func appearance(at time: FrameTime) -> Appearance {
        let pos = position(at: time.media)
        let barPixels = barTrack.map { filledPixels($0, position: pos) } ?? 0
        // The whole seconds the two time texts show (they change on the same frame, each redrawn on its side of the
        // bar), the bar's filled pixels, and in `d` what changes more than the progress row: the version and the glyph.
        let playing: Int64 = config.playing && !time.paused ? 1 : 0
        return Appearance(Int64(max(0, pos).rounded(.down)), Int64(remainingSeconds(pos)),
                          Int64(barPixels), Int64(version) * 2 + playing)
    }
}

extension NowPlayingWidget {
    /// A live update, checked by `NowPlayingConfig.change`, on the render thread.
    public func apply(_ change: any WidgetChange, at media: Double) {
        guard let c = change as? NowPlayingConfig.Change else { return }
        update(config.applying(c, positionNow: position(at: media)), at: media)
    }
}

extension NowPlayingConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        NowPlayingWidget(id: id, style: style, config: self, warn: warn)
    }
}
