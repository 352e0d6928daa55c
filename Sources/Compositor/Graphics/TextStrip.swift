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

    /// Draws the line with the layout's draw origin at (`x`, `y`), rounded to whole pixels, inside `clip`.
    public func draw(on canvas: Canvas, x: Double, y: Double, clip: Rect) {
        let left = Int(x.rounded()) + origin.x, top = Int(y.rounded()) + origin.y
        for (i, tile) in tiles.enumerated() {
            let tx = left + i * Self.tileWidth
            let r = Rect(x: Double(tx), y: Double(top), width: Double(tile.width), height: Double(tile.height))
            guard let visible = r.intersection(clip) else { continue }
            canvas.composite(tile, at: (tx, top), in: visible)
        }
    }
}
