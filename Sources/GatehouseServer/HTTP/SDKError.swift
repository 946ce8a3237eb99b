import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import HTTPTypes
import Hummingbird

/// An SDK-facing refusal: the SDK's numeric `code` (docs/sdk-protocol.md), a stable `reason` and a
/// message, as `application/json`. The HTTP status mirrors the code for proxies and logs.
struct SDKError: HTTPResponseError {
    let refusal: SDKRefusal
    /// A rate limit's refusal: 429 with this `Retry-After` (the SDK retries later, as for -8).
    var retryAfter: Int? = nil

    var status: HTTPResponse.Status {
        if retryAfter != nil { return .tooManyRequests }
        return switch refusal.status {
        case .success: .ok
        case .serverFailure: .serviceUnavailable
        case .appKeyEmpty, .paramsError: .badRequest
        case .signatureError: .unauthorized
        case .appKeyError: .forbidden
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let (head, body) = rendered(requestID: context.logger[metadataKey: RequestIDMiddleware.metadataKey]?.description)
        return Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: body))
    }

    /// The answer's head and body, for the router and for `AdmissionHandler`, which answers before it.
    func rendered(requestID: String?) -> (HTTPResponse, ByteBuffer) {
        let body = JSONWriter.refusal(code: refusal.status.rawValue, reason: refusal.reason, message: refusal.message, requestID: requestID)
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return (HTTPResponse(status: status, headerFields: headers), ByteBuffer(bytes: body))
    }

    /// Maps whatever an SDK handler threw to the SDK's codes: bad input is -10, the database -8.
    static func from(_ error: any Error) -> any Error {
        switch error {
        case let error as SDKError: return error
        case let refusal as SDKRefusal: return SDKError(refusal: refusal)
        case let limited as RateLimited:
            return SDKError(
                refusal: SDKRefusal(
                    .serverFailure,
                    "rate_limited",
                    "Too many requests from this address or device; retry after \(limited.retryAfter) s."
                ),
                retryAfter: limited.retryAfter
            )
        case let unavailable as PlayIntegrityUnavailable:
            return SDKError(refusal: SDKRefusal(.serverFailure, "integrity_unavailable", unavailable.detail), retryAfter: unavailable.retryAfter)
        case let error as DomainError: return SDKError(refusal: SDKRefusal(error))
        case let problem as Problem where (400..<500).contains(problem.status.code):
            return SDKError(refusal: SDKRefusal(.paramsError, problem.code, problem.detail ?? problem.title))
        case let error as StoreError:
            if case .unavailable = error {
                return SDKError(refusal: SDKRefusal(.serverFailure, "database_unavailable", "Try again shortly."))
            }
            return error
        default: return error
        }
    }
}
