import Foundation
import Hummingbird

/// Recordings and pushes started and stopped at run time.
struct OutputRoutes {
    let session: any ControlledSession
    /// Where recordings started over the API may write.
    let place: RecordingPlace

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        routes.post("/v1/outputs") { request, _ in try await start(request) }
        routes.delete("/v1/outputs") { request, _ in
            guard let id = request.uri.queryParameters.get("id") else {
                throw HTTPError(.badRequest, message: "give the output as ?id=… (see status)")
            }
            // The output leaves now; finalizing its file takes up to 10 s and is reported by `didStop`.
            do { try session.stopOutput(id: id) } catch { throw HTTPError.answering(error) }
            return try Response.json(["stopping": id], status: .accepted)
        }
        return routes
    }

    func start(_ request: Request) async throws -> Response {
        let body = try await request.jsonBody(as: OutputBody.self)
        let (spec, claimed) = try spec(of: body)
        do {
            return try .json(["started": try session.startOutput(spec, rendition: try body.renditionSize())])
        } catch {
            // The empty file made to hold the name goes when the recording does not start.
            if let claimed { RecordingPlace.release(claimed) }
            throw HTTPError.answering(error)
        }
    }

    /// The output `body` asks for, and the file claimed for it: a recording's file is made empty to hold its name,
    /// unless it is to be overwritten.
    func spec(of body: OutputBody) throws -> (OutputSpec, claimed: String?) {
        do {
            if let path = body.record.value {
                let policy = try body.policy(), overwrite = try body.overwrites()
                // The name's own checks (422) come before the folder's (403), which claims the file.
                _ = try OutputSpec.record(path, policy: policy)
                let target: String
                do { target = try place.check(path, overwrite: overwrite) } catch {
                    throw HTTPError(.forbidden, message: error.description)
                }
                return (try OutputSpec.record(target, policy: policy), overwrite ? nil : target)
            }
            if let url = body.push.value { return (try OutputSpec.push(url), nil) }
            throw HTTPError(.badRequest, message: "expected {\"record\": \"FILE\"} or {\"push\": \"URL\"}")
        } catch let e as OutputSpec.Invalid {
            throw HTTPError(.unprocessableContent, message: e.description)
        }
    }
}

/// `POST /v1/outputs`: `{"record": "FILE"}` (with `"resize"` and `"overwrite"`) or `{"push": "URL"}`, and
/// `"rendition"`. A record, push or resize of another type counts as absent; overwrite and rendition of another type
/// are refused.
struct OutputBody: Decodable, KnownFields {
    static let fields = ["record", "push", "resize", "overwrite", "rendition"]
    var record: Sent<String>
    var push: Sent<String>
    var resize: Sent<String>
    var overwrite: Sent<Bool>
    var rendition: Sent<String>

    func policy() throws -> OutputSpec.ResizePolicy {
        guard let text = resize.value else { return .fit }
        guard let policy = OutputSpec.ResizePolicy(rawValue: text) else {
            throw HTTPError(.badRequest, message: "'resize' must be fit or split")
        }
        return policy
    }

    func overwrites() throws -> Bool {
        switch overwrite {
        case .absent: return false
        case .value(let b): return b
        case .other: throw HTTPError(.badRequest, message: "'overwrite' must be true or false")
        }
    }

    /// The rendition to record or push instead of the main picture; nil for the main picture.
    func renditionSize() throws -> PixelSize? {
        if case .absent = rendition { return nil }
        guard let text = rendition.value, let size = try? RenderSize.parse(text) else {
            throw HTTPError(.badRequest,
                            message: "'rendition' is a size like \"416x234\", one of the run's --rendition")
        }
        return size
    }
}
