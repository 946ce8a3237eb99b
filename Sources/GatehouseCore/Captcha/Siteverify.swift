import Foundation

/// Siteverify in Cloudflare Turnstile's shape, so a backend that calls Turnstile switches by changing
/// the URL and the secret: the same field names in, the same `error-codes` out.
public enum Siteverify {
    public enum ErrorCode: String, Error, Sendable, CaseIterable {
        case missingInputSecret = "missing-input-secret"
        case invalidInputSecret = "invalid-input-secret"
        case missingInputResponse = "missing-input-response"
        case invalidInputResponse = "invalid-input-response"
        case badRequest = "bad-request"
        case timeoutOrDuplicate = "timeout-or-duplicate"
        case internalError = "internal-error"
    }

    /// The fields as posted (form or JSON), before checking.
    public struct Input: Sendable, Equatable {
        public var secret: String?
        public var response: String?
        public var remoteIP: String?
        public var idempotencyKey: String?

        public init(secret: String?, response: String?, remoteIP: String?, idempotencyKey: String?) {
            self.secret = secret
            self.response = response
            self.remoteIP = remoteIP
            self.idempotencyKey = idempotencyKey
        }
    }

    /// A checked request: whose secret, which token (hashed), and the optional extras.
    public struct Checked: Sendable, Equatable {
        public let appKey: AppKey
        public let serverSecret: String
        public let tokenHash: String
        public let remoteIP: String?
        public let idempotencyKey: String?
    }

    /// The secret is `appKey:serverSecret`: Gatehouse's server secrets do not name their app.
    public static func check(_ input: Input) -> Result<Checked, ErrorCode> {
        guard let secret = input.secret, !secret.isEmpty else { return .failure(.missingInputSecret) }
        guard let colon = secret.firstIndex(of: ":"), let appKey = try? AppKey(validating: String(secret[..<colon])) else {
            return .failure(.invalidInputSecret)
        }
        guard let response = input.response, !response.isEmpty else { return .failure(.missingInputResponse) }
        guard let tokenHash = CaptchaPass.storedHash(of: response) else { return .failure(.invalidInputResponse) }
        var remoteIP: String?
        if let text = input.remoteIP, !text.isEmpty {
            guard let address = IPAddress(text)?.description else { return .failure(.badRequest) }
            remoteIP = address
        }
        var idempotencyKey: String?
        if let key = input.idempotencyKey, !key.isEmpty {
            // Turnstile takes a UUID here; anything else is a malformed request.
            guard let uuid = UUID(uuidString: key) else { return .failure(.badRequest) }
            idempotencyKey = uuid.text
        }
        return .success(
            Checked(
                appKey: appKey,
                serverSecret: String(secret[secret.index(after: colon)...]),
                tokenHash: tokenHash,
                remoteIP: remoteIP,
                idempotencyKey: idempotencyKey
            )
        )
    }
}
