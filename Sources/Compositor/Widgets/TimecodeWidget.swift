import Foundation

/// The timecode strip: two rows of cells a machine reads (`TimecodeCodec`) and a line people read, showing
/// the frame number and the wall-clock time of the frame. Must span the picture's full width (dock it top or
/// bottom; the layout bleeds it past the scene padding).
public final class TimecodeWidget: WidgetBase, Widget {
    private var engine: TextEngine?
    private var rowBoxes: [Rect] = []
    private var textBox = Rect.zero
    private var textSize = 8.0
    private let formatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "HH:mm:ss.SSS'Z'"
        return f
    }()

    public override init(id: String, style: Style) {
        super.init(id: id, style: style)
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
        self.engine = engine
        // Rows take 60 % of the band, the readable line the rest; cells span the box edge to edge.
        let rowH = (box.height * 0.3).rounded(.down)
        rowBoxes = [Rect(x: box.x, y: box.y, width: box.width, height: rowH),
                    Rect(x: box.x, y: box.y + rowH, width: box.width, height: rowH)]
        textBox = Rect(x: box.x, y: box.y + 2 * rowH, width: box.width, height: box.height - 2 * rowH).inset(dx: 4 * scale, dy: 1)
        let sample = text(frame: 888_888, wall: Date(timeIntervalSince1970: 0))
        textSize = TextLayout.fitting(engine: engine, text: sample, font: style.font, box: textBox,
                                      maxSize: textBox.height).pixelSize
        let l = TextLayout(engine: engine, text: sample, font: style.font, pixelSize: textSize, width: textBox.width)
        record(l, x: textBox.x, y: textBox.y + (textBox.height - l.height) / 2)
    }

    func text(frame: Int64, wall: Date) -> String {
        "#\(frame)  \(formatter.string(from: wall))"
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        canvas.fill(box, .black)
        let ms = UInt64(max(0, (time.wall.timeIntervalSince1970 * 1000).rounded(.down)))
        let rows = TimecodeCodec.rows(for: .init(frame: UInt64(max(0, time.frame)), wallMilliseconds: ms))
        let cell = box.width / Double(TimecodeCodec.cellsPerRow)
        for (r, cells) in rows.enumerated() {
            let rb = rowBoxes[r]
            for (i, white) in cells.enumerated() where white {
                // Whole-pixel cell edges keep the cells crisp for the encoder.
                let x0 = (rb.x + Double(i) * cell).rounded(), x1 = (rb.x + Double(i + 1) * cell).rounded()
                canvas.fill(Rect(x: x0, y: rb.y, width: x1 - x0, height: rb.height), .white)
            }
        }
        guard let engine else { return }
        let l = TextLayout(engine: engine, text: text(frame: time.frame, wall: time.wall), font: style.font,
                           pixelSize: textSize, width: textBox.width)
        l.draw(on: canvas, x: textBox.x, y: textBox.y + (textBox.height - l.height) / 2, color: .white)
    }

    public func appearance(at time: FrameTime) -> Appearance {
        Appearance(time.frame, Int64((time.wall.timeIntervalSince1970 * 1000).rounded(.down)))
    }
}

extension TimecodeConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        TimecodeWidget(id: id, style: style)
    }
}
