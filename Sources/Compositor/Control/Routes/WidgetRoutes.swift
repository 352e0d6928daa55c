import Foundation
import Hummingbird

/// Widgets at run time: their properties, and calls into a web widget's page.
struct WidgetRoutes {
    let session: any ControlledSession

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        // The properties are the widget's own (its schema checks them), so the body stays a JSON object.
        // `"at": {"frame": N}` or `{"time": SECONDS}` holds the change until that frame (the timecode strip's number)
        // or scene time: it lands in the same frame in every output, rendition and recording.
        routes.patch("/v1/widgets/:id") { request, context in
            let id = context.parameters.get("id") ?? ""
            var properties = try await request.jsonBody(as: [String: JSONValue].self)
            let moment = try properties.removeValue(forKey: "at").map(Self.moment)
            do { try session.updateWidget(id: id, properties: properties, at: moment) } catch {
                throw HTTPError.answering(error)
            }
            var answer: [String: JSONValue] = ["updated": .string(id)]
            switch moment {
            case .frame(let f)?: answer["frame"] = .number(Double(f))
            case .sceneTime(let t)?: answer["time"] = .number(t)
            case nil: break
            }
            return try Response.json(answer)
        }
        routes.post("/v1/web/:id") { request, context in
            try await webCall(request, id: context.parameters.get("id") ?? "")
        }
        // A preview with data: the template drawn with `data` in a page of its own, the live page untouched.
        routes.post("/v1/web/:id/snapshot") { request, context in
            let body = try await request.jsonBody(as: WebCallBody.self, fields: ["data", "size"])
            guard let data = try body.dataText() else {
                throw HTTPError(.badRequest, message: "expected {\"data\": {…}} (and \"size\": \"WxH\" to draw at another size)")
            }
            var size: PixelSize?
            if let text = body.size.value {
                do { size = try RenderSize.parse(text) } catch { throw HTTPError(.badRequest, message: "\(error)") }
            }
            let png: Data
            do { png = try await session.webSnapshot(id: context.parameters.get("id") ?? "", data: data, size: size) } catch {
                throw HTTPError.answering(error)
            }
            return Response(status: .ok, headers: [.contentType: "image/png"], body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }
        return routes
    }

    /// `{"frame": N}` (a whole number, 0 or more) or `{"time": SECONDS}` (scene time).
    static func moment(_ value: JSONValue) throws -> ChangeMoment {
        let expected = "'at' must be {\"frame\": N} (the timecode strip's frame number) or {\"time\": SECONDS} (scene time)"
        guard case .object(let o) = value, o.count == 1 else { throw HTTPError(.badRequest, message: expected) }
        switch (o["frame"], o["time"]) {
        case (.number(let f)?, nil) where f >= 0 && f == f.rounded() && f < 1e15: return .frame(Int64(f))
        case (nil, .number(let t)?) where t.isFinite && t >= 0: return .sceneTime(t)
        default: throw HTTPError(.badRequest, message: expected)
        }
    }

    /// A call into web widget `id`'s page, answered with what the page returned.
    func webCall(_ request: Request, id: String) async throws -> Response {
        let body = try await request.jsonBody(as: WebCallBody.self)
        let call = try body.checkedCall(), data = try body.dataText()
        do {
            let moment = try body.at.map(Self.moment)
            let result = try await session.webCall(id: id, call: call, data: data, name: body.name.value, at: moment)
            return try .json(["result": result])
        } catch { throw HTTPError.answering(error) }
    }
}

/// `POST /v1/web/{id}`: `{"call": "update", "data": …}`, and `"name"` for `invoke` (a name of another type counts as
/// absent).
/// A call into a web widget's page, and (`data`, `size`) the snapshot's body.
struct WebCallBody: Decodable, KnownFields {
    static let fields = ["call", "data", "name", "at"]
    var call: Sent<String>
    var data: JSONValue?
    var name: Sent<String>
    /// `/snapshot`: the size to draw at.
    var size: Sent<String>
    /// The frame the call's picture lands on: `{"frame": N}` or `{"time": SECONDS}`.
    var at: JSONValue?

    func checkedCall() throws -> String {
        guard let call = call.value else {
            throw HTTPError(.badRequest, message: "expected {\"call\": \"update\", \"data\": …}; calls: update, "
                            + "play, next, stop, remove, reload, invoke (with \"name\")")
        }
        return call
    }

    /// `data` as the page gets it: a string as it is, an object or a list as JSON text; null as none.
    func dataText() throws -> String? {
        switch data {
        case .string(let s)?: return s
        case .object?, .array?:
            return data.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
        case nil, .null?: return nil
        default: throw HTTPError(.badRequest, message: "'data' must be JSON (an object or a string)")
        }
    }
}
