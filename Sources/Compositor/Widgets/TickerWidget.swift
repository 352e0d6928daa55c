import Foundation

/// The flowing memo: items scroll right to left at a steady speed in a seamless loop.
///
/// Scrolling is a position on an endless strip, `distance(t) = speed × t`. The strip is a chain of segments,
/// each a loop of one item list repeated. Replacing the items at time t ends the current loop after the copy
/// that is showing and starts the new list right behind it, so what is on screen never jumps.
public final class TickerWidget: WidgetBase, Widget {
    public typealias Config = TickerConfig

    private struct Segment {
        var items: [String]
        /// Strip position (in units of 720-scale pixels) where the first copy starts.
        var start: Double
        /// Where the last copy ends; nil while this is the loop still running.
        var end: Double?
        /// How the loop looks at the current size, made when first drawn (dropped by a layout).
        var look: Look?
    }

    /// One loop of items at the current size: its layout and the strips drawn from it, made once, found from
    /// its segment without hashing the items every frame.
    private final class Look {
        let layout: TextLayout
        var strip: TextStrip?
        var opaque: TextStrip?
        var stripFailed = false
        init(layout: TextLayout) { self.layout = layout }
    }

    public private(set) var config: Config
    private var segments: [Segment]
    private var engine: TextEngine?
    /// Where the band under the text is one colour per row (a plain panel, or a background that only changes
    /// from top to bottom): those colours, first row first, read once after a layout; nil when it is not.
    private var bandRows: [Color]?
    private var bandRead = false
    /// The copies on screen at one scene time: asked for by `paintsOpaquely`, then by `draw`.
    private var planned: (media: Double, copies: [Copy])?
    private var fontSize = 10.0
    private var textY = 0.0
    private var placedOnce = false
    /// `changedRegions` of a moving ticker, made once per layout: it is asked every frame.
    private var contentParts: [Rect] = []

    public init(id: String, style: Style, config: Config) {
        self.config = config
        // Start with the first item entering from the right edge.
        segments = [Segment(items: config.items, start: 0, end: nil)]
        super.init(id: id, style: style)
    }

    /// The text of one loop of `items`.
    func loopText(_ items: [String]) -> String {
        let cleaned = items.map { $0.replacingOccurrences(of: "\n", with: " ") }.filter { !$0.isEmpty }
        return cleaned.isEmpty ? "" : cleaned.joined(separator: config.separator) + config.separator
    }

    /// Scroll distance at scene time `t`, in pixels of the current size.
    public func distance(at t: Double) -> Double { config.speed * scale * t }

    /// Replaces the items at scene time `t`: the loop on screen finishes, the new one follows it. A loop still waiting
    /// for its turn (it has not entered the band) is replaced, not queued behind: items that change faster than a loop
    /// scrolls by show the newest next, and what the ticker holds stays the loops on screen and one waiting.
    public func replaceItems(_ items: [String], at t: Double) {
        let d = distance(at: t) / max(scale, 1e-9)
        guard var current = segments.last else { return }
        let w = look(segment: segments.count - 1).map { $0.layout.width / scale } ?? 0
        if current.start > d {
            segments[segments.count - 1] = Segment(items: items, start: current.start, end: nil)
        } else if w > 0 {
            // End the running loop after the copy whose tail has not yet entered the box.
            let copies = max(1, ((d - current.start) / w).rounded(.up))
            current.end = current.start + copies * w
            segments[segments.count - 1] = current
            segments.append(Segment(items: items, start: current.end!, end: nil))
        } else {
            segments = [Segment(items: items, start: d, end: nil)]
        }
        config.items = items
        planned = nil
        version += 1
    }

    /// Loops held: those on screen and the one waiting for its turn.
    var loopsHeld: Int { segments.count }

    /// The look of segment `i`, made the first time it is needed at this size; nil for a loop with no text.
    private func look(segment i: Int) -> Look? {
        if let l = segments[i].look { return l }
        guard let engine else { return nil }
        let text = loopText(segments[i].items)
        if text.isEmpty { return nil }
        let l = Look(layout: TextLayout(engine: engine, text: text, font: style.font, pixelSize: fontSize))
        segments[i].look = l
        return l
    }

    private func strip(_ look: Look) -> TextStrip? {
        if look.strip == nil && !look.stripFailed {
            look.strip = try? TextStrip(layout: look.layout, color: style.color)
            look.stripFailed = look.strip == nil
        }
        return look.strip
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
        contentParts = [content]
        self.engine = engine
        for i in segments.indices { segments[i].look = nil }
        planned = nil
        bandRows = nil
        bandRead = false
        // Type fills most of the band: one line, never wrapped.
        let sample = TextLayout(engine: engine, text: "Ag漢字", font: style.font, pixelSize: 100)
        let fromBox = content.height / (sample.height / 100)
        fontSize = max(4, (style.fontSize.map { min($0 * scale, fromBox) } ?? fromBox).rounded(.down))
        let line = TextLayout(engine: engine, text: "Ag漢字", font: style.font, pixelSize: fontSize)
        textY = content.y + (content.height - line.height) / 2
        textBoxes = [Rect(x: content.x, y: textY, width: content.width, height: line.height)]
        if !placedOnce {
            // The first loop starts a picture's width back at time zero, so the band is full from the first frame.
            // The picture's width in 720-scale units, not the band's: the band's is rounded to whole pixels, and a
            // start taken from it made a renderer resized to a size draw the text pixels away from one made at that
            // size (a probe's reference after a resize, a window's rendition beside the main picture).
            placedOnce = true
            if segments.count == 1 { segments[0].start = -Double(frame.width) / scale }
        }
    }

    private typealias Copy = (look: Look, x: Double)

    /// Each copy of a loop on screen at `time`: how it looks and its left edge in pixels.
    private func copies(at time: FrameTime) -> [Copy] {
        if let planned, planned.media == time.media { return planned.copies }
        let d = distance(at: time.media) / scale
        pruneSegments(before: d - content.width / scale)
        var out: [Copy] = []
        for i in segments.indices {
            guard let look = look(segment: i) else { continue }
            let seg = segments[i]
            let w = look.layout.width / scale
            guard w > 0.5 else { continue }
            // Copy k of the segment occupies strip [start + k w, start + (k+1) w); strip point p is on screen at
            // x = content.maxX - (d - p) (in 720-scale units, times scale for pixels).
            let visibleFrom = d - content.width / scale
            var k = max(0, ((visibleFrom - seg.start) / w).rounded(.down))
            while true {
                let p = seg.start + k * w
                if p >= d { break }
                if let end = seg.end, p >= end - 1e-6 { break }
                out.append((look, content.maxX - (d - p) * scale))
                k += 1
            }
        }
        planned = (time.media, out)
        return out
    }

    /// The opaque strips for `copies` when they cover the content band from edge to edge; nil otherwise.
    private func opaquePlan(_ copies: [Copy]) -> [(TextStrip, Double)]? {
        guard let rows = bandRows else { return nil }
        var plan: [(TextStrip, Double)] = []
        let top = Int(content.minY.rounded()), textTop = Int(textY.rounded())
        for c in copies {
            if c.look.opaque == nil, let plain = strip(c.look) {
                c.look.opaque = try? plain.opaque { row in rows[min(rows.count - 1, max(0, textTop + plain.origin.y + row - top))] }
            }
            guard let opaque = c.look.opaque else { return nil }
            plan.append((opaque, c.x))
        }
        // Side by side, the copies must cover the band (and the strips its rows).
        var covered = Int(content.minX.rounded(.down))
        for (strip, x) in plan.sorted(by: { $0.1 < $1.1 }) {
            let span = strip.span(x: x)
            guard span.from <= covered else { return nil }
            covered = max(covered, span.to)
        }
        guard let first = plan.first?.0, covered >= Int(content.maxX.rounded(.up)),
              textTop + first.origin.y <= top, textTop + first.origin.y + first.height >= Int(content.maxY.rounded(.up))
        else { return nil }
        return plan
    }

    public func paintsOpaquely(_ region: Rect, at time: FrameTime) -> Bool {
        content.contains(region, tolerance: 0) && opaquePlan(copies(at: time)) != nil
    }

    /// The opaque strips `draw` would copy into `region`, when it would copy nothing else.
    public func directPieces(for region: Rect, at time: FrameTime) -> [DirectPiece]? {
        guard content.contains(region, tolerance: 0), let plan = opaquePlan(copies(at: time)) else { return nil }
        return plan.map { DirectPiece(strip: $0.0, x: $0.1, y: textY) }
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        let copies = copies(at: time)
        if content.contains(canvas.clipExtents, tolerance: 0), let plan = opaquePlan(copies) {
            canvas.withState {
                canvas.clip(to: content)
                for (strip, x) in plan { strip.draw(on: canvas, x: x, y: textY, clip: content) }
            }
            return
        }
        drawPanel(on: canvas)
        if !bandRead { readBand(canvas) }
        canvas.withState {
            canvas.clip(to: content)
            for c in copies {
                if let strip = strip(c.look) {
                    strip.draw(on: canvas, x: c.x, y: textY, clip: content)
                } else {
                    c.look.layout.draw(on: canvas, x: c.x, y: textY, color: style.color)
                }
            }
        }
    }

    /// Reads the band under the text (background and panel, before any text is drawn) and keeps its row colours
    /// when every row is one colour.
    /// Over another layer (a video background) the band is not known from one look: it stays unread.
    private func readBand(_ canvas: Canvas) {
        bandRead = true
        guard !hasLayerBelow else { return }
        let surface = canvas.surface
        let x0 = Int(content.minX.rounded()), x1 = Int(content.maxX.rounded())
        let y0 = Int(content.minY.rounded()), y1 = Int(content.maxY.rounded())
        guard x0 >= 0, y0 >= 0, x1 <= surface.width, y1 <= surface.height, x1 > x0, y1 > y0,
              canvas.clipExtents.contains(Rect(x: Double(x0), y: Double(y0), width: Double(x1 - x0), height: Double(y1 - y0)), tolerance: 0)
        else { return }
        let stride = surface.stride
        bandRows = surface.withBytes { bytes -> [Color]? in
            var rows: [Color] = []
            for y in y0..<y1 {
                let row = bytes.baseAddress!.advanced(by: y * stride).assumingMemoryBound(to: UInt32.self)
                let first = row[x0]
                for x in (x0 + 1)..<x1 where row[x] != first { return nil }
                rows.append(Color(red: Double((first >> 16) & 0xFF) / 255, green: Double((first >> 8) & 0xFF) / 255,
                                  blue: Double(first & 0xFF) / 255, alpha: 1))
            }
            return rows
        }
    }

    private func pruneSegments(before visibleFrom: Double) {
        while segments.count > 1, let end = segments.first?.end, end < visibleFrom {
            segments.removeFirst()
        }
    }

    /// While only the text moves, the panel's padding stays as it is: the content box is all that changes.
    public func changedRegions(from old: Appearance, to new: Appearance) -> [Rect]? {
        old.b == new.b ? contentParts : nil
    }

    public func appearance(at time: FrameTime) -> Appearance {
        // Quarter-pixel steps: a moving ticker changes every frame, a paused one never.
        Appearance(Int64((distance(at: time.media) * 4).rounded()), Int64(version))
    }
}

extension TickerWidget {
    /// A live update, checked by `TickerConfig.change`, on the render thread.
    public func apply(_ change: any WidgetChange, at media: Double) {
        if let c = change as? TickerConfig.Change { replaceItems(c.items, at: media) }
    }
}

extension TickerConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        TickerWidget(id: id, style: style, config: self)
    }
}
