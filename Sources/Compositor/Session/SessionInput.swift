import Foundation

/// Something a run takes in from outside while it goes: a video layer's source, the web widgets' pages, the music
/// of `--audio FILE`. Each starts, fails, retries and stops on its own; the session keeps them as one `InputSet`
/// and starts, stops and reports them alike.
protocol SessionInput: AnyObject, Sendable {
    func start()
    func stop()
    /// Adds what status says of it (its state, frames, restarts).
    func report(into status: inout LiveSession.Status)
    /// A live change of widget `id` was checked and queued for the frame loop: an input that feeds that widget
    /// follows it (a video layer's new source).
    func widgetChanged(id: String, _ change: any WidgetChange)
    /// The picture is about to be `size`: an input that must get ready for its widgets' new boxes starts now.
    func willResize(to size: PixelSize, scene: Scene)
}

extension SessionInput {
    func widgetChanged(id: String, _ change: any WidgetChange) {}
    func willResize(to size: PixelSize, scene: Scene) {}
}

/// What an input widget's type needs to make its inputs, in a run or for a snapshot.
struct InputContext: Sendable {
    let scene: Scene
    /// The main picture's size when the inputs start.
    let picture: PixelSize
    let web: WebSettings
    /// What `window.pipcompose` says for a page of a size (a run's viewers and now-playing card; a snapshot's none).
    let pageState: @Sendable (PixelSize?) -> String
    let onEvent: @Sendable (SessionEvent) -> Void
    let warn: @Sendable (String) -> Void
}
