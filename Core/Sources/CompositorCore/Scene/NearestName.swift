/// The name a misspelt one was likely meant to be: the scene's keys and the API's fields answer "did you mean".
public enum NearestName {
    /// The one name of `names` within an edit of `word` (two for names of 5 letters or more; case aside), when
    /// exactly one is that near.
    public static func to(_ word: String, in names: [String]) -> String? {
        let near = names.filter { editDistance(word.lowercased(), $0.lowercased()) <= ($0.count >= 5 ? 2 : 1) }
        return near.count == 1 ? near[0] : nil
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let b = Array(b)
        var row = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = Swift.min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
