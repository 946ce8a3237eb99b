/// The slider SDK's result codes (seed `000_615a3e17bb2a4705`): `success` or `failed(code)`. The
/// 8001-8004 codes are raised by the client itself and never sent by the server.
public enum CaptchaCode: Int, Sendable, CaseIterable {
    case success = 0
    case verificationFailed = 1001
    case systemException = 1002
    case parameterError = 1003
    case cancelled = 1005

    /// The code a refusal carries: anything about the answer or the challenge's state is a failed
    /// verification (fetch a new challenge); a malformed request is a parameter error.
    public init(_ error: DomainError) {
        switch error.code {
        case .captchaNotFound, .captchaExpired, .captchaSolved, .captchaExhausted: self = .verificationFailed
        case .masterKeyInvalid, .sealedSecretUnreadable: self = .systemException
        default: self = .parameterError
        }
    }
}
