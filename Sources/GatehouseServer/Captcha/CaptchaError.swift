import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import HTTPTypes
import Hummingbird

/// A captcha-facing refusal in the slider SDK's terms: `code` 1001/1002/1003 (docs/captcha.md), a
/// stable `reason` and a message, with the CORS header so that a page on another origin can read it.
struct CaptchaError: HTTPResponseError {
    let status: HTTPResponse.Status
    let code: CaptchaCode
    let reason: String
    let message: String
    var retryAfter: Int?

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let requestID = context.logger[metadataKey: RequestIDMiddleware.metadataKey]?.description
        let body = JSONWriter.refusal(code: code.rawValue, reason: reason, message: message, requestID: requestID)
        var headers: HTTPFields = [.contentType: "application/json", .accessControlAllowOrigin: "*"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Maps whatever a captcha handler threw to the slider's codes; anything unexpected stays as it
    /// is, for the problem middleware to log.
    static func from(_ error: any Error) -> any Error {
        switch error {
        case let error as CaptchaError: return error
        case let limited as RateLimited:
            return CaptchaError(
                status: .tooManyRequests,
                code: .systemException,
                reason: "rate_limited",
                message: "Too many captcha requests; retry after \(limited.retryAfter) s.",
                retryAfter: limited.retryAfter
            )
        case let error as DomainError:
            if error.kind == .fault { return error }
            return CaptchaError(status: HTTPResponse.Status(error.kind), code: CaptchaCode(error), reason: error.code.rawValue, message: error.detail)
        case let problem as Problem where (400..<500).contains(problem.status.code):
            return CaptchaError(status: problem.status, code: .parameterError, reason: problem.code, message: problem.detail ?? problem.title)
        case let error as StoreError:
            if case .unavailable = error {
                return CaptchaError(
                    status: .serviceUnavailable,
                    code: .systemException,
                    reason: "database_unavailable",
                    message: "Try again shortly."
                )
            }
            return error
        default: return error
        }
    }
}
