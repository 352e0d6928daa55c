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
        }
    }

    /// The span of pixels the line covers when drawn at `x` (rounded as `draw` rounds).
    public func span(x: Double) -> (from: Int, to: Int) {
        let left = Int(x.rounded()) + origin.x
        return (left, left + width)
    }

    /// Draws the line with the layout's draw origin at (`x`, `y`), rounded to whole pixels, inside `clip`.
    public func draw(on canvas: Canvas, x: Double, y: Double, clip: Rect) {
        let left = Int(x.rounded()) + origin.x, top = Int(y.rounded()) + origin.y
        for (i, tile) in tiles.enumerated() {
            let tx = left + i * Self.tileWidth
            let r = Rect(x: Double(tx), y: Double(top), width: Double(tile.width), height: Double(tile.height))
            guard let visible = r.intersection(clip) else { continue }
            if isOpaque { canvas.copy(tile, at: (tx, top), in: visible) } else { canvas.composite(tile, at: (tx, top), in: visible) }
        }
    }
}
