import Crypto
import Foundation

/// The SDK's numeric status codes (the device SDK's `TTCode`), used by every `/v1/sdk` answer.
public enum SDKStatus: Int, Sendable, Codable {
    case success = 0
    /// The gateway returned a failure: Gatehouse could not reach its database. Retry later.
    case serverFailure = -8
    case appKeyEmpty = -9
    case paramsError = -10
    /// "Key calculation error": the request signature, its timestamp or its nonce was refused.
    case signatureError = -11
    /// Unknown appKey, or the app is disabled.
    case appKeyError = -12
}

/// Why an SDK request was refused: the SDK status code, a stable reason and a sentence.
public struct SDKRefusal: Error, Equatable, Sendable {
    public let status: SDKStatus
    public let reason: String
    public let message: String

    public init(_ status: SDKStatus, _ reason: String, _ message: String) {
        self.status = status
        self.reason = reason
        self.message = message
    }

    public static let appKeyMissing = SDKRefusal(.appKeyEmpty, "appkey_empty", "Send the appKey in X-Gatehouse-AppKey.")
    public static let appKeyUnknown = SDKRefusal(.appKeyError, "appkey_invalid", "This appKey is not valid for this server.")
    public static let appDisabled = SDKRefusal(.appKeyError, "app_disabled", "This app is disabled.")
    public static let signatureMissing = SDKRefusal(
        .signatureError,
        "signature_missing",
        "Send X-Gatehouse-Timestamp, X-Gatehouse-Nonce and X-Gatehouse-Signature."
    )
    public static let signatureMalformed = SDKRefusal(.signatureError, "signature_malformed", "A signature header is malformed.")
    public static let signatureMismatch = SDKRefusal(.signatureError, "signature_mismatch", "The signature does not match the request.")
    public static let timestampOutsideWindow = SDKRefusal(
        .signatureError,
        "timestamp_outside_window",
        "The timestamp is more than 300 seconds from the server's clock."
    )
    public static let nonceReused = SDKRefusal(.signatureError, "nonce_reused", "This nonce was already used.")

    /// Input the domain refused: always a parameter error for the SDK, with the domain's code as reason.
    public init(_ error: DomainError) {
        if error.code == .appDisabled {
            self = .appDisabled
        } else {
            self.init(.paramsError, error.code.rawValue, error.detail)
        }
    }
}

/// The signed-request scheme of `/v1/sdk` (docs/sdk-protocol.md):
///
/// ```
/// canonical = METHOD "\n" PATH "\n" TIMESTAMP "\n" NONCE "\n" hex(SHA-256(body))
/// X-Gatehouse-Signature = base64url(HMAC-SHA256(secretKey, canonical))
/// ```
public struct SDKSignedRequest: Sendable, Equatable {
    public static let window: TimeInterval = 300

    public let appKey: AppKey
    public let timestamp: Int
    public let nonce: String
    public let signature: [UInt8]

    /// Until when the nonce must be remembered: past the window after its signed timestamp the
    /// request is refused anyway, and twice the window leaves a margin. Fixed by the signed
    /// timestamp, so that a replay of the request finds the same (nonce, expiry) key.
    public var nonceKeptUntil: Date { Date(timeIntervalSince1970: TimeInterval(timestamp) + 2 * Self.window) }

    /// Reads the four headers, or says what is missing or malformed.
    public static func parse(
        appKey: String?,
        timestamp: String?,
        nonce: String?,
        signature: String?
    ) -> Result<SDKSignedRequest, SDKRefusal> {
        guard let appKey, !appKey.isEmpty else { return .failure(.appKeyMissing) }
        guard let key = try? AppKey(validating: appKey) else { return .failure(.appKeyUnknown) }
        guard let timestamp, let nonce, let signature else { return .failure(.signatureMissing) }
        guard let seconds = Int(timestamp), timestamp.utf8.count <= 12,
            (16...64).contains(nonce.utf8.count), nonce.utf8.allSatisfy(Base64URL.isAlphabet),
            let mac = Base64URL.decode(signature), mac.count == 32
        else { return .failure(.signatureMalformed) }
        return .success(SDKSignedRequest(appKey: key, timestamp: seconds, nonce: nonce, signature: mac))
    }

    public static func canonical(method: String, path: String, timestamp: Int, nonce: String, body: some Sequence<UInt8>) -> String {
        SDKRequestSigning.canonical(method: method, path: path, timestamp: timestamp, nonce: nonce, body: body)
    }

    public static func sign(canonical: String, secretKey: String) -> String {
        SDKRequestSigning.sign(canonical: canonical, secretKey: secretKey)
    }

    /// Checks the clock window and the signature against every live SDK secret of the app (so a
    /// rotation's overlap works for SDK requests too). The nonce's single use is the store's job.
    public func verify(
        method: String,
        path: String,
        body: some Sequence<UInt8>,
        app: App,
        secrets: [SealedSecret],
        at now: Date,
        box: SecretBox
    ) -> Result<Void, SDKRefusal> {
        guard app.status == .active else { return .failure(.appDisabled) }
        guard abs(now.timeIntervalSince1970 - TimeInterval(timestamp)) <= Self.window else { return .failure(.timestampOutsideWindow) }
        let canonical = Self.canonical(method: method, path: path, timestamp: timestamp, nonce: nonce, body: body)
        var matched = false
        for (_, plaintext) in SealedSecret.livePlaintexts(of: .sdk, among: secrets, at: now, box: box) {
            let expected = HMAC<SHA256>.authenticationCode(for: Array(canonical.utf8), using: SymmetricKey(data: Array(plaintext.utf8)))
            if constantTimeEquals(Array(expected), signature) { matched = true }
        }
        return matched ? .success(()) : .failure(.signatureMismatch)
    }
}
