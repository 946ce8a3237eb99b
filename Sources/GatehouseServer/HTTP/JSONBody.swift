import Foundation
import GatehouseStore
import HTTPTypes
import Hummingbird
import NIOCore

/// Reads and writes JSON bodies with the generated API types, turning every way a body can be wrong
/// into a specific problem instead of a 500.
enum JSONBody {
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Decodes the body as `T`. An absent body decodes as `whenEmpty` if given (optional request bodies).
    static func decode<T: Decodable>(
        _ type: T.Type,
        from request: Request,
        context: some GatehouseContext,
        whenEmpty: T? = nil
    ) async throws -> T {
        let buffer = try await collect(request, context: context)
        return try decode(type, from: buffer, contentType: request.headers.value(.contentType), whenEmpty: whenEmpty)
    }

    static let malformedJSON = Problem(.badRequest, code: "malformed_json", title: "Malformed JSON", detail: "The body is not valid UTF-8 JSON.")

    /// The body as text, refusing bytes that are not UTF-8 (rather than replacing them, which would
    /// let a body mean something else to us than to whoever wrote it).
    static func text(_ buffer: ByteBuffer) throws -> String {
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else { throw malformedJSON }
        return text
    }

    /// The whole body, up to the configured size, within the configured time: a client that never
    /// finishes sending gets 408 instead of holding a request (and its slot) open.
    static func collect(_ request: Request, context: some GatehouseContext) async throws -> ByteBuffer {
        let context = context.base
        let limit = context.maxBodyBytes
        let tooSlow = Problem(
            .requestTimeout,
            code: "body_timeout",
            title: "Body too slow",
            detail: "The request body must arrive within \(context.bodyTimeout)."
        )
        do {
            // The connection keeps the body's deadline (`BodyDeadlineHandler`).
            var request = request
            return try await request.collectBody(upTo: limit)
        } catch is BodyDeadlineHandler.Expired {
            throw tooSlow
        } catch is NIOTooManyBytesError {
            throw Problem(
                .contentTooLarge,
                code: "body_too_large",
                title: "Body too large",
                detail: "Request bodies are limited to \(limit) bytes."
            )
        } catch {
            // Only the client's bytes can fail here: a malformed chunk, or a body cut short.
            throw Problem(.badRequest, code: "malformed_body", title: "Malformed body", detail: "The request body could not be read.")
        }
    }

    /// The media type of a `Content-Type` value, lowercased, without its parameters.
    static func mediaType(of contentType: String?) -> String? {
        contentType?.split(separator: ";", omittingEmptySubsequences: false).first.map { $0.trimmingSpacesAndTabs.lowercased() }
    }

    static func requireJSON(_ contentType: String?) throws(Problem) {
        // The spelling every client sends is taken as it stands: splitting and lowercasing it cost a
        // forged-token query 1.5% of its CPU (docs/PERFORMANCE.md).
        guard contentType == "application/json" || mediaType(of: contentType) == "application/json" else {
            throw Problem(
                .unsupportedMediaType,
                code: "unsupported_media_type",
                title: "Unsupported media type",
                detail: "Send the body as application/json."
            )
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer, contentType: String?, whenEmpty: T? = nil) throws -> T {
        if buffer.readableBytes == 0, let whenEmpty { return whenEmpty }
        try requireJSON(contentType)
        let data = Data(buffer: buffer)
        let value: T
        do {
            value = try decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            // Foundation reports a syntax error and a value that does not fit (3300.5 for an integer)
            // alike, with no coding path; only on this error path is the body parsed once more to tell.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
                (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) == nil
            {
                throw malformedJSON
            }
            throw problem(for: error)
        } catch {
            throw malformedJSON
        }
        try rejectNulls(in: data)
        return value
    }

    /// No request schema allows `null`, but the decoder reads a `null` optional as absent. Bodies
    /// that contain the bytes `null` anywhere are parsed once more to find a real one.
    private static func rejectNulls(in data: Data) throws {
        guard data.range(of: Data("null".utf8)) != nil,
            let object = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        else { return }
        if let path = nullPath(in: object, at: []) {
            let field = path.joined(separator: ".")
            throw Problem(
                .badRequest,
                code: "invalid_body",
                title: "Invalid body",
                detail: "Field '\(field)' may not be null; omit it instead.",
                field: field
            )
        }
    }

    private static func nullPath(in value: Any, at path: [String]) -> [String]? {
        switch value {
        case is NSNull: return path
        case let object as [String: Any]: return object.lazy.compactMap { nullPath(in: $0.value, at: path + [$0.key]) }.first
        case let array as [Any]: return array.enumerated().lazy.compactMap { nullPath(in: $0.element, at: path + [String($0.offset)]) }.first
        default: return nil
        }
    }

    static func problem(for error: DecodingError) -> Problem {
        func path(_ codingPath: [any CodingKey]) -> String? {
            codingPath.isEmpty ? nil : codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context) where context.debugDescription.hasPrefix("Additional properties are disabled"):
            let field = path(context.codingPath)
            return Problem(
                .badRequest,
                code: "unknown_field",
                title: "Unknown field",
                detail: "Field '\(field ?? "")' is not part of this request.",
                field: field
            )
        case .dataCorrupted(let context):
            return Problem(
                .badRequest,
                code: "invalid_body",
                title: "Invalid body",
                detail: context.debugDescription,
                field: path(context.codingPath)
            )
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return Problem(
                .badRequest,
                code: "invalid_body",
                title: "Invalid body",
                detail: "Missing field '\(field ?? key.stringValue)'.",
                field: field
            )
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            return Problem(
                .badRequest,
                code: "invalid_body",
                title: "Invalid body",
                detail: "Field '\(field ?? "(body)")' must be \(describe(type)).",
                field: field
            )
        @unknown default:
            return Problem(.badRequest, code: "invalid_body", title: "Invalid body", detail: "The body does not match the schema.")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        default: "of the documented type"
        }
    }

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
