/// Solves placements for one render size: a box per visible widget, all inside the picture. Docked boxes never
/// overlap; floating ones (a background, an inset) lie over or under them, drawn in the widgets' z order.
public enum DockLayout {
    public struct Item: Sendable {
        public var id: String
        public var placement: Placement
        public init(id: String, placement: Placement) {
            self.id = id
            self.placement = placement
        }
    }

    public struct Result: Equatable, Sendable {
        /// Boxes of the visible widgets, by id.
        public var boxes: [String: Rect]
        /// Widgets with no room at this size, lowest priority first.
        public var hidden: [String]

        public init(boxes: [String: Rect], hidden: [String]) {
            self.boxes = boxes
            self.hidden = hidden
        }
    }

    public static func solve(_ items: [Item], size: PixelSize, spacing: LayoutSpacing) -> Result {
        var visible = items
        var hidden: [String] = []
        while true {
            if let boxes = attempt(visible, size: size, spacing: spacing) {
                return Result(boxes: boxes, hidden: hidden)
            }
            // Hide the lowest priority widget (the last one among equals) and try again.
            guard let victim = visible.enumerated().min(by: { a, b in
                a.element.placement.priority != b.element.placement.priority
                    ? a.element.placement.priority < b.element.placement.priority : a.offset > b.offset
            }) else { return Result(boxes: [:], hidden: hidden) }
            hidden.append(victim.element.id)
            visible.remove(at: victim.offset)
        }
    }

    /// Places every item, or returns nil when one of them gets less than its minimum.
    static func attempt(_ items: [Item], size: PixelSize, spacing: LayoutSpacing) -> [String: Rect]? {
        let portrait = size.isPortrait
        let short = Double(size.shortSide)
        let scale = short / 720
        let pad = (spacing.padding * short).rounded()
        let gap = (spacing.gap * short).rounded()
        var outer = size.rect
        var boxes: [String: Rect] = [:]

        func takeBand(_ item: Item, from area: inout Rect, gapAfter: Double) -> Bool {
            let (edge, fraction) = item.placement.resolved(portrait: portrait)
            let along = (edge == .top || edge == .bottom) ? Double(size.height) : Double(size.width)
            var t = (fraction * along).rounded()
            if let cap = item.placement.maxPixels { t = min(t, (cap * scale).rounded()) }
            t = max(t, item.placement.minPixels)
            let room = (edge == .top || edge == .bottom) ? area.height : area.width
            if t > room { return false }
            let g = min(gapAfter, room - t)
            switch edge {
            case .top:
                boxes[item.id] = Rect(x: area.x, y: area.y, width: area.width, height: t)
                area = Rect(x: area.x, y: area.y + t + g, width: area.width, height: area.height - t - g)
            case .bottom:
                boxes[item.id] = Rect(x: area.x, y: area.maxY - t, width: area.width, height: t)
                area = Rect(x: area.x, y: area.y, width: area.width, height: area.height - t - g)
            case .left:
                boxes[item.id] = Rect(x: area.x, y: area.y, width: t, height: area.height)
                area = Rect(x: area.x + t + g, y: area.y, width: area.width - t - g, height: area.height)
            case .right:
                boxes[item.id] = Rect(x: area.maxX - t, y: area.y, width: t, height: area.height)
                area = Rect(x: area.x, y: area.y, width: area.width - t - g, height: area.height)
            case .fill:
                return false
            }
            return area.width >= 0 && area.height >= 0
        }

        let docked = items.filter { $0.placement.float == nil }
        // Bleeding bands first, on the picture's own edges.
        for item in docked where item.placement.bleed {
            if !takeBand(item, from: &outer, gapAfter: 0) { return nil }
        }
        var area = outer.inset(pad)
        // Floating widgets take nothing from the others: the background is the whole picture, an inset sits in the
        // padded area inside the bleeding bands.
        for item in items {
            switch item.placement.float {
            case .background:
                boxes[item.id] = size.rect
            case .inset(let inset):
                let r = (portrait ? item.placement.portraitInset ?? inset : inset).box(in: area, size: size)
                if min(r.width, r.height) < item.placement.minPixels { return nil }
                boxes[item.id] = r
            case nil:
                continue
            }
        }
        let fills = docked.filter { !$0.placement.bleed && $0.placement.resolved(portrait: portrait).edge == .fill }
        for item in docked where !item.placement.bleed && item.placement.resolved(portrait: portrait).edge != .fill {
            if !takeBand(item, from: &area, gapAfter: fills.isEmpty ? 0 : gap) { return nil }
        }
        // Fills share what is left along its longer side.
        if !fills.isEmpty {
            let n = Double(fills.count)
            let horizontal = area.width >= area.height
            let span = ((horizontal ? area.width : area.height) - gap * (n - 1)) / n
            for (i, item) in fills.enumerated() {
                let offset = Double(i) * (span + gap)
                let r = horizontal
                    ? Rect(x: area.x + offset, y: area.y, width: span, height: area.height)
                    : Rect(x: area.x, y: area.y + offset, width: area.width, height: span)
                if min(r.width, r.height) < item.placement.minPixels { return nil }
                boxes[item.id] = r
            }
        }
        return boxes
    }
}

extension Scene {
    /// The boxes of this scene's widgets at `size`: what the renderer lays out, and what a resize will give before
    /// it is applied (a web widget's page is told its coming size at the request).
    public func dock(at size: PixelSize) -> DockLayout.Result {
        DockLayout.solve(widgets.map { DockLayout.Item(id: $0.id, placement: $0.placement) }, size: size, spacing: spacing)
    }
}
