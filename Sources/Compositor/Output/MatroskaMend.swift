import Foundation

/// Mends a Matroska file that stopped in the middle of a write (a full disk), as `FragmentMend` does for MP4.
///
/// A recording's Matroska is an EBML header and a Segment: its header elements (SeekHead, Info, Tracks) and then
/// clusters of frames (SimpleBlocks). matroskamux writes each cluster's size, and the segment's, as it goes. When the
/// disk fills, the last write stops part way through a cluster, whose size then claims bytes the file does not have:
/// ffmpeg reports "File ended prematurely". Mended, the last cluster holds its whole blocks only, the cluster's and
/// the segment's sizes say so, and nothing written whole is lost.
enum MatroskaMend {
    /// Mends the Matroska file at `path`. Nil when the file cannot be read or written, or does not start as a
    /// recording does (EBML header, Segment, and its Tracks whole): such a file is left as it is. `.whole`: it was
    /// whole, and was not touched. `samplesDropped` is 1 when the cut went through a frame; `samplesKept` counts the
    /// blocks of the last cluster.
    @discardableResult
    static func mend(_ path: String) -> FragmentMend.Outcome? {
        RecordingMend.withFile(path, mend)
    }

    private static func mend(_ fd: Int32, size: UInt64) -> FragmentMend.Outcome? {
        let reader = Reader(fd: fd, size: size)
        guard let ebml = reader.element(at: 0), ebml.id == 0x1A45DFA3, let ebmlEnd = ebml.end, ebmlEnd <= size,
              let segment = reader.element(at: ebmlEnd), segment.id == 0x18538067 else { return nil }
        var at = segment.dataStart
        var tracks = false
        var cut: UInt64?
        var dropped = 0, blocks = 0
        var cluster: (element: Element, keptEnd: UInt64)?
        while at < size {
            // A header the write stopped in: the file ends before it.
            guard let e = reader.element(at: at) else { cut = at; break }
            if e.id == 0x1F43B675 {
                let walk = reader.children(of: e)
                guard walk.partial else { at = walk.stop; continue }
                // The cluster the write stopped in keeps its whole frames.
                guard tracks else { return nil }
                dropped = walk.cutBlock ? 1 : 0
                blocks = walk.blocks
                if walk.kept > e.dataStart { cluster = (e, walk.kept) }
                cut = walk.kept > e.dataStart ? walk.kept : at
                break
            }
            guard let end = e.end, end <= size else { cut = at; break }
            if e.id == 0x1654AE6B { tracks = true }
            at = end
        }
        guard tracks || cut == nil else { return nil }
        guard let cut else { return .whole }
        // The sizes that claimed what was never written: the last cluster's, and the segment's when it is known.
        var rewritten = 0
        if let (c, kept) = cluster, c.sizeKnown {
            guard let changed = reader.rewriteSize(of: c, to: kept - c.dataStart) else { return nil }
            rewritten += changed
        }
        if segment.sizeKnown {
            guard let changed = reader.rewriteSize(of: segment, to: cut - segment.dataStart) else { return nil }
            rewritten += changed
        }
        guard ftruncate(fd, off_t(cut)) == 0 else { return nil }
        return FragmentMend.Outcome(bytesCut: size - cut, samplesDropped: dropped, bytesRewritten: rewritten,
                                    samplesKept: cluster == nil ? nil : blocks)
    }

    /// An element's header: its ID, where its size field is and how wide, and its data.
    struct Element {
        var id: UInt32
        var offset: UInt64
        var sizeAt: UInt64
        var sizeWidth: Int
        var dataStart: UInt64
        /// Nil: unknown (a live cluster or segment runs to what follows).
        var dataSize: UInt64?
        var sizeKnown: Bool { dataSize != nil }
        var end: UInt64? { dataSize.map { dataStart + $0 } }
    }

    private struct Reader {
        let fd: Int32
        let size: UInt64

        func bytes(_ count: Int, at offset: UInt64) -> [UInt8]? {
            guard offset < size else { return nil }
            let n = Int(min(UInt64(count), size - offset))
            var b = [UInt8](repeating: 0, count: n)
            return pread(fd, &b, n, off_t(offset)) == n ? b : nil
        }

        /// The element whose header starts at `offset`; nil when the header is not whole or not EBML.
        func element(at offset: UInt64) -> Element? {
            guard let b = bytes(12, at: offset), let first = b.first, first != 0 else { return nil }
            let idWidth = first.leadingZeroBitCount + 1
            guard idWidth <= 4, b.count > idWidth else { return nil }
            let id = b[0..<idWidth].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let lead = b[idWidth]
            guard lead != 0 else { return nil }
            let width = lead.leadingZeroBitCount + 1
            guard b.count >= idWidth + width else { return nil }
            var value = UInt64(lead & (0xFF >> width))
            for k in 1..<width { value = value << 8 | UInt64(b[idWidth + k]) }
            let unknown = value == (UInt64(1) << (7 * UInt64(width))) - 1
            return Element(id: id, offset: offset, sizeAt: offset + UInt64(idWidth), sizeWidth: width,
                           dataStart: offset + UInt64(idWidth + width), dataSize: unknown ? nil : value)
        }

        /// A cluster's children, read to its end (its size, or for a cluster of unknown size the next top-level
        /// element or the file's end): where its whole frames end (`kept`) and how many they are, where the walk
        /// stopped, whether the file ends inside the cluster (`partial`), and whether that cut went through a frame.
        func children(of cluster: Element) -> (kept: UInt64, blocks: Int, stop: UInt64, partial: Bool, cutBlock: Bool) {
            var at = cluster.dataStart, kept = cluster.dataStart, blocks = 0
            let limit = min(cluster.end ?? size, size)
            while at < limit {
                guard let c = element(at: at) else { return (kept, blocks, at, true, false) }
                // In a cluster of unknown size, a top-level element (a 4-byte ID) is the next one.
                if !cluster.sizeKnown && c.id >= 0x1000_0000 { return (kept, blocks, at, false, false) }
                // SimpleBlock, BlockGroup, EncryptedBlock: a frame.
                let block = c.id == 0xA3 || c.id == 0xA0 || c.id == 0xAF
                guard let end = c.end, end <= limit else { return (kept, blocks, at, true, block) }
                at = end
                if block {
                    kept = end
                    blocks += 1
                }
            }
            return (kept, blocks, at, (cluster.end ?? size) > size, false)
        }

        /// Writes `value` into `e`'s size field, keeping its width. Returns how many of its bytes changed (none is
        /// written when none does), or nil when it cannot be read or written, or the value does not fit.
        func rewriteSize(of e: Element, to value: UInt64) -> Int? {
            let width = e.sizeWidth
            // All ones means "unknown": the value must stay below it.
            guard value < (UInt64(1) << (7 * UInt64(width))) - 1, let old = bytes(width, at: e.sizeAt),
                  old.count == width else { return nil }
            var field = [UInt8](repeating: 0, count: width)
            for k in 0..<width { field[k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - k))) }
            field[0] |= UInt8(0x80 >> (width - 1))
            let changed = zip(old, field).filter { $0 != $1 }.count
            guard changed > 0 else { return 0 }
            return pwrite(fd, field, width, off_t(e.sizeAt)) == width ? changed : nil
        }
    }
}
