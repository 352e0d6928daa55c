import Foundation

/// The step a page on the scene's clock is to take next, handed to the page when it asks for it (a long poll,
/// `GET …/s/ID?after=N`, answered once a step after frame N is posted). The page fetches its steps rather than
/// being told them through WebKit's `run-javascript`: a script run that way right after a page loaded was lost in 1
/// of about 4 renders here (the page never ran it; wpesrc 1.22 says nothing), and a render would wait for ever.
///
/// `@unchecked Sendable`: everything is behind `lock`.
final class StepBoard: @unchecked Sendable {
    private let lock = NSLock()
    /// The newest step posted (its frame, and what the page is handed: JSON, its closing brace left off).
    private var latest: (frame: Int64, json: String)?
    private var waiting: [(after: Int64, resume: CheckedContinuation<String?, Never>)] = []
    private var closed = false
    /// Every call posted so far, by frame, and the scene's rate: what a page started again replays.
    private var history: [Int64: String] = [:]
    private let fps: Int

    init(fps: Int) { self.fps = fps }

    /// Frame `frame` at `ms` scene milliseconds, the page's functions in `calls` called first (name, argument).
    func post(frame: Int64, ms: Double, calls: [(name: String, argument: String?)]) {
        let list = calls.map { c in
            "[\(PageWrapper.literal(c.name)),\(c.argument.map(PageWrapper.literal) ?? "null")]"
        }.joined(separator: ",")
        let json = "{\"frame\":\(frame),\"ms\":\(ms),\"calls\":[\(list)]"
        let ready = lock.withLock { () -> [(CheckedContinuation<String?, Never>, String)] in
            if !calls.isEmpty { history[frame] = "[\(list)]" }
            let step = (frame: frame, json: json)
            latest = step
            let due = waiting.filter { $0.after < frame }.map { ($0.resume, answer(step, after: $0.after)) }
            waiting.removeAll { $0.after < frame }
            return due
        }
        ready.forEach { $0.0.resume(returning: $0.1) }
    }

    /// Under `lock`: the step as a page asking `after` is handed it. A page that asks from the start (-1) for a step
    /// past frame 0 is one started again mid-render: it is handed the frames before it too, with their calls, to
    /// replay without drawing (frame f at f × 1000 ÷ fps ms, as the render steps it).
    private func answer(_ latest: (frame: Int64, json: String), after: Int64) -> String {
        guard after < 0, latest.frame > 0 else { return latest.json + "}" }
        let calls = history.filter { $0.key < latest.frame }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        return latest.json + ",\"replay\":{\"fps\":\(fps),\"calls\":{\(calls)}}}"
    }

    /// The step after frame `after` once it is posted; nil once the board is closed (the render is over).
    func next(after: Int64) async -> String? {
        await withCheckedContinuation { (c: CheckedContinuation<String?, Never>) in
            let now = lock.withLock { () -> String?? in
                if let latest, latest.frame > after { return .some(answer(latest, after: after)) }
                if closed { return .some(nil) }
                waiting.append((after, c))
                return nil
            }
            if let now { c.resume(returning: now) }
        }
    }

    /// No more steps: every page waiting is answered that there are none.
    func close() {
        let all = lock.withLock { () -> [CheckedContinuation<String?, Never>] in
            closed = true
            defer { waiting = [] }
            return waiting.map(\.resume)
        }
        all.forEach { $0.resume(returning: nil) }
    }
}
