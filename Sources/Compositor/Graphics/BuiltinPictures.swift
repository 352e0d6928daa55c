/// Pictures pipcompose carries itself, named `builtin:NAME` in a scene (the demo's cover art), so a scene can show
/// artwork without any file.
enum BuiltinPictures {
    /// A scene-independent cover picture, so the demo has artwork without any file.
    static let cover = """
    <svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">
      <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
        <stop offset="0" stop-color="#ff7a59"/><stop offset="1" stop-color="#7b2ff7"/></linearGradient></defs>
      <rect width="512" height="512" rx="40" fill="url(#g)"/>
      <circle cx="256" cy="256" r="150" fill="#111"/>
      <circle cx="256" cy="256" r="110" fill="none" stroke="#333" stroke-width="6"/>
      <circle cx="256" cy="256" r="70" fill="none" stroke="#333" stroke-width="6"/>
      <circle cx="256" cy="256" r="40" fill="#f4d35e"/>
      <circle cx="256" cy="256" r="8" fill="#111"/>
    </svg>
    """

    /// The SVG text of `builtin:NAME`, or nil.
    static func svg(named path: String) -> String? {
        path == "builtin:cover" ? cover : nil
    }
}
