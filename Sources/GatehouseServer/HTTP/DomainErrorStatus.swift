import GatehouseCore
import HTTPTypes

extension HTTPResponse.Status {
    /// The one place a domain refusal's kind becomes an HTTP status, for problem+json and for the
    /// SDK-facing shapes (the captcha's, STS's) alike.
    init(_ kind: DomainError.Kind) {
        self =
            switch kind {
            case .invalid: .badRequest
            case .unauthenticated: .unauthorized
            case .forbidden: .forbidden
            case .notFound: .notFound
            case .conflict: .conflict
            case .gone: .gone
            case .unavailable: .serviceUnavailable
            case .fault: .internalServerError
            }
    }
}
