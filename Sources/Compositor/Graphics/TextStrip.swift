import CPango
import Foundation

/// A line of text drawn once into transparent tiles, to be copied into place as often as needed: a scrolling
/// ticker moves the same text every frame, and copying premultiplied pixels costs a fraction of laying out and
/// compositing its glyphs again (colour emoji included, they are pixels like the rest).
///
/// Tiles are at most `tileWidth` wide (Cairo surfaces stop at 32767 pixels, and a long memo is wider); each holds
/// the part of the line that falls in it, so the tiles side by side are the line drawn at once.
public final class TextStrip {
    static let tileWidth = 4096
    /// Where the strip's top-left sits relative to the layout's draw origin (ink can overhang the logical box).
    let origin: (x: Int, y: Int)
    let width: Int
    let height: Int
    /// Opaque tiles replace what is below them; transparent ones blend over it.
    public let isOpaque: Bool
    private var tiles: [ImageSurface] = []
    /// Each tile's pixels and row stride, read once the tiles are drawn (they never change after).
    private var tileData: [UnsafeMutablePointer<UInt8>] = []
    private var tileStrides: [Int] = []
    private var converted: StripPlanes?
    /// A vertical phase whose planes could not be made (no memory): not tried again every frame.
    private var unconvertible: Int?

    public init(layout: TextLayout, color: Color) throws {
        let ink = layout.inkRect, logical = layout.logicalRect
        let left = Int(min(ink.minX, logical.minX).rounded(.down)) - 1
        let top = Int(min(ink.minY, logical.minY).rounded(.down)) - 1
        let right = Int(max(ink.maxX, logical.maxX).rounded(.up)) + 1
        let bottom = Int(max(ink.maxY, logical.maxY).rounded(.up)) + 1
        origin = (left, top)
        width = max(1, right - left)
        height = max(1, bottom - top)
        isOpaque = false
        var x = 0
        while x < width {
            let tile = try ImageSurface(width: min(Self.tileWidth, width - x), height: height, format: .argb32)
            let canvas = Canvas(surface: tile)
            layout.draw(on: canvas, x: Double(-left - x), y: Double(-top), color: color)
            tile.flush()
            tiles.append(tile)
            x += Self.tileWidth
        }
    }

    /// This strip blended once over rows of one colour each (`rowColor(row)`, row 0 being the strip's top), as
    /// opaque tiles: where the text scrolls over a plain band, a frame is one copy instead of putting the band back
    /// and blending the text over it.
    public func opaque(rowColor: (Int) -> Color) throws -> TextStrip { try TextStrip(opaqueOver: self, rowColor: rowColor) }

    private init(opaqueOver strip: TextStrip, rowColor: (Int) -> Color) throws {
        origin = strip.origin
        width = strip.width
        height = strip.height
        isOpaque = true
        for source in strip.tiles {
            let tile = try ImageSurface(width: source.width, height: source.height)
            let canvas = Canvas(surface: tile)
            for row in 0..<height {
                canvas.paint(Rect(x: 0, y: Double(row), width: Double(source.width), height: 1), rowColor(row))
            }
            canvas.composite(source, at: (0, 0), in: Rect(x: 0, y: 0, width: Double(source.width), height: Double(height)))
            tile.flush()
            tiles.append(tile)
            tileData.append(cairo_image_surface_get_data(tile.pointer)!)
            tileStrides.append(tile.stride)
        }
    }

    /// The strip in I420 for rows landing with `verticalPhase` (see StripPlanes), made the first time it is asked
    /// for; nil for a transparent strip (only opaque pixels can be written as they are) or when there is no memory
    /// for it (the strip is then drawn as usual).
    func planes(verticalPhase: Int) -> StripPlanes? {
        guard isOpaque, unconvertible != verticalPhase else { return nil }
        if let converted, converted.verticalPhase == verticalPhase { return converted }
        guard let made = StripPlanes(width: width, height: height, verticalPhase: verticalPhase, copyRow: { y, row in
            for (i, tile) in tiles.enumerated() {
                (row + i * Self.tileWidth * 4).update(from: pixel(i * Self.tileWidth, y), count: tile.width * 4)
            }
        }) else {
            unconvertible = verticalPhase
            return nil
        }
        converted = made
        return made
    }

    /// Copies `count` BGRx pixels of row `y` from column `x` on (inside the strip) to `into`, across tiles.
    func copyPixels(row y: Int, from x: Int, count: Int, into: UnsafeMutablePointer<UInt8>) {
        var done = 0
        while done < count {
            let at = x + done
            let n = min(count - done, Self.tileWidth - at % Self.tileWidth)
            (into + done * 4).update(from: pixel(at, y), count: n * 4)
            done += n
        }
    }

    /// The BGRx pixel at column `x`, row `y` of the strip (inside it).
    func pixel(_ x: Int, _ y: Int) -> UnsafePointer<UInt8> {
        let t = x / Self.tileWidth
        return UnsafePointer(tileData[t]) + y * tileStrides[t] + (x - t * Self.tileWidth) * 4
    }

    /// Where the strip's top-left pixel lands when drawn with the layout's origin at (`x`, `y`), as `draw` rounds.
    public func placement(x: Double, y: Double) -> (left: Int, top: Int) {
        (Int(x.rounded()) + origin.x, Int(y.rounded()) + origin.y)
    }

    /// The span of pixels the line covers when drawn at `x` (rounded as `draw` rounds).
    public func span(x: Double) -> (from: Int, to: Int) {
        let left = Int(x.rounded()) + origin.x
        return (left, left + width)
    }

    /// Draws the line with the layout's draw origin at (`x`, `y`), rounded to whole pixels, inside `clip`.
    public func draw(on canvas: Canvas, x: Double, y: Double, clip: Rect) {
        let (left, top) = placement(x: x, y: y)
        for (i, tile) in tiles.enumerated() {
            let tx = left + i * Self.tileWidth
            let r = Rect(x: Double(tx), y: Double(top), width: Double(tile.width), height: Double(tile.height))
            guard let visible = r.intersection(clip) else { continue }
            if isOpaque { canvas.copy(tile, at: (tx, top), in: visible) } else { canvas.composite(tile, at: (tx, top), in: visible) }
        }
    }
}
