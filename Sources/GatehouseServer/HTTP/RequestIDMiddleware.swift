import Foundation
import HTTPTypes
import Hummingbird

/// Gives every request an id: the caller's `X-Request-Id` when it is sane, else a new UUID. The id is
/// in every log line of the request, in problem bodies, and echoed in the response header.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    static let metadataKey = "request_id"
    static let header = HTTPField.Name("X-Request-Id")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id = Self.acceptable(request.headers.value(Self.header)) ?? UUID.random().text
        context.logger[metadataKey: Self.metadataKey] = .string(id)
        do {
            var response = try await next(request, context)
            response.headers[Self.header] = id
            return response
        } catch let error as any HTTPResponseError {
            var response = try error.response(from: request, context: context)
            response.headers[Self.header] = id
            return response
        }
    }

    /// Up to 128 visible ASCII characters; anything else could forge log lines.
    static func acceptable(_ value: String?) -> String? {
        guard let value, (1...128).contains(value.utf8.count), value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return nil
        }
        return value
    }
}
