import Foundation
import GatehouseCore
import GatehouseStore
import HTTPTypes
import Hummingbird

/// A refusal in the shape the OSS SDKs' credential providers read: `StatusCode` (the HTTP status,
/// as an int) with `ErrorCode` and `ErrorMessage`. Never a key, never an upstream's raw answer.
struct STSError: HTTPResponseError {
    let status: HTTPResponse.Status
    let errorCode: String
    let message: String

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = body(requestID: context.logger[metadataKey: RequestIDMiddleware.metadataKey]?.description)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Members in sorted order, as the SDKs' readers have always had them.
    func body(requestID: String?) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.object { body in
            body.member("ErrorCode", errorCode)
            body.member("ErrorMessage", message)
            body.member("RequestId", requestID)
            body.key("StatusCode")
            body.integer(Int(status.code))
        }
        return writer.bytes
    }

    /// Maps whatever a storage handler threw; anything unexpected stays as it is, for the problem
    /// middleware to log as a 500.
    static func from(_ error: any Error) -> any Error {
        switch error {
        case let error as STSError: return error
        case let failure as UpstreamFailure:
            switch failure {
            case .refused(let status, let code):
                return STSError(status: .badGateway, errorCode: "UpstreamRefused", message: "The STS refused AssumeRole: \(code) (HTTP \(status)).")
            case .unavailable(let why):
                return STSError(status: .badGateway, errorCode: "UpstreamUnavailable", message: "The STS did not answer after retries: \(why).")
            case .garbled(let why):
                return STSError(status: .badGateway, errorCode: "UpstreamGarbled", message: "The STS answered something unreadable: \(why).")
            }
        case let error as DomainError:
            if error.kind == .fault { return error }
            return STSError(status: HTTPResponse.Status(error.kind), errorCode: error.code.rawValue, message: error.detail)
        case let problem as Problem where (400..<500).contains(problem.status.code):
            return STSError(status: problem.status, errorCode: problem.code, message: problem.detail ?? problem.title)
        case let error as StoreError:
            if case .unavailable = error {
                return STSError(status: .serviceUnavailable, errorCode: "database_unavailable", message: "Try again shortly.")
            }
            return error
        default:
            return error
        }
    }
}
