import CPango
import Foundation

extension FontStyle {
    /// A Pango font description string, e.g. "Noto Sans, Bold Italic".
    var pangoDescription: String {
        var s = family
        var styles: [String] = []
        if bold { styles.append("Bold") }
        if italic { styles.append("Italic") }
        if !styles.isEmpty { s += ", " + styles.joined(separator: " ") }
        return s
    }
}

/// The font families fontconfig knows, so a scene naming a missing font gets a warning, not a silent
/// substitution.
public enum FontCatalog {
    private static let families: Set<String> = {
        let map = pango_cairo_font_map_get_default()
        var list: UnsafeMutablePointer<UnsafeMutablePointer<PangoFontFamily>?>?
        var count: Int32 = 0
        pango_font_map_list_families(map, &list, &count)
        var names = Set<String>()
        if let list {
            for i in 0..<Int(count) {
                if let f = list[i], let n = pango_font_family_get_name(f) {
                    names.insert(String(cString: n).lowercased())
                }
            }
            g_free(list)
        }
        return names
    }()

    /// Families in a comma-separated list that fontconfig does not have (generic names like "sans" count
    /// as present).
    public static func missing(in familyList: String) -> [String] {
        let generic: Set<String> = ["sans", "sans-serif", "serif", "monospace", "mono", "cursive", "fantasy",
                                    "system-ui", "emoji"]
        return familyList.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !generic.contains($0.lowercased()) && !families.contains($0.lowercased()) }
    }
}
