import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Asks a deployment's auth hook (`--auth-hook URL`) whether to let a request in: POSTs `AuthHook.Question` as JSON,
/// waits at most `timeout`, keeps the answer `AuthHook.Cache.lifetime`. See `AuthHook` for what the answers mean.
///
/// `@unchecked Sendable`: `session` is used only through its async calls, which are safe from any thread.
public final class AuthHookClient: @unchecked Sendable {
    public let url: URL
    public let cache: AuthHook.Cache
    public let timeout: TimeInterval
    private let session: URLSession

    /// `cacheFor`: how long an answer is kept, in seconds (0: asked for every request).
    public init(url text: String, cacheFor: TimeInterval = 10, timeout: TimeInterval = 2) throws(ControlError) {
        guard let u = URLComponents(string: text), ["http", "https"].contains(u.scheme?.lowercased() ?? ""),
              u.host?.isEmpty == false, u.user == nil, u.fragment == nil, let url = u.url else {
            throw .bad("--auth-hook takes the http:// or https:// URL of your service that decides who gets in (it "
                       + "is POSTed a JSON question and lets in on 2xx), e.g. http://127.0.0.1:9000/pipcompose-auth; "
                       + "got '\(text)'")
        }
        guard cacheFor >= 0, cacheFor <= 3600 else {
            throw .bad("--auth-hook-cache is how many seconds an answer is kept, 0 to 3600, got \(cacheFor)")
        }
        self.url = url
        self.timeout = timeout
        cache = AuthHook.Cache(lifetime: cacheFor)
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = timeout
        config.timeoutIntervalForResource = timeout
        config.httpCookieStorage = nil
        config.urlCache = nil
        session = URLSession(configuration: config)
    }

    /// The hook's answer to `q`, kept or asked now.
    public func ask(_ q: AuthHook.Question) async -> AuthHook.Answer {
        if let kept = cache.answer(to: q) { return kept }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try? JSONEncoder().encode(q)
        let answer: AuthHook.Answer
        do {
            let (body, response) = try await session.data(for: request)
            answer = .from(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: body)
        } catch {
            answer = .down((error as? URLError).map { "\($0.code == .timedOut ? "no answer in \(timeout) s" : $0.localizedDescription)" }
                           ?? "\(error)")
        }
        cache.keep(answer, for: q)
        return answer
    }

    /// Ends the connections kept to the hook.
    public func stop() { session.invalidateAndCancel() }
}
