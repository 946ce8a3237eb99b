import Foundation

/// The app backend's credential: HTTP Basic with the appKey as user and the server secret as password.
public enum BackendCredentials {
    public enum Refusal: String, Error, Sendable, Equatable {
        case missing = "backend_credentials_missing"
        case malformed = "backend_credentials_malformed"
        /// Unknown appKey and wrong secret look the same from outside, so neither can be probed.
        case invalid = "backend_credentials_invalid"
        case appDisabled = "app_disabled"

        public var detail: String {
            switch self {
            case .missing: "Send 'Authorization: Basic base64(appKey:serverSecret)'."
            case .malformed: "The Authorization header is not Basic base64(appKey:serverSecret)."
            case .invalid: "The appKey and server secret do not match a live credential."
            case .appDisabled: "This app is disabled."
            }
        }
    }

    /// Splits an `Authorization: Basic ...` value into appKey and secret, or says why it cannot.
    public static func presented(inAuthorization header: String?) -> Result<(appKey: AppKey, secret: String), Refusal> {
        guard let header, !header.isEmpty else { return .failure(.missing) }
        let parts = header.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].count == 5, parts[0].elementsEqual("basic".utf8, by: { $0 | 0x20 == $1 }),
            let decoded = base64(parts[1]), let text = String(validating: decoded, as: UTF8.self), let colon = text.firstIndex(of: ":")
        else { return .failure(.malformed) }
        guard let appKey = try? AppKey(validating: String(text[..<colon])) else { return .failure(.invalid) }
        return .success((appKey, String(text[text.index(after: colon)...])))
    }

    /// Standard base64 with its padding (RFC 4648 section 4), as Basic credentials carry it: every
    /// backend request decodes one, and Foundation's decoder (through `Data` and `String(data:)`) was a
    /// tenth of a refused risk query's own work. Its alphabet and padding are mapped onto `Base64URL`'s
    /// decoder, which takes each byte string's one encoding only (unused low bits zero), as encoders
    /// write it.
    static func base64(_ text: Substring.UTF8View) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var bytes = Array(text)
        for _ in 0..<2 where bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            case UInt8(ascii: "-"), UInt8(ascii: "_"): return nil
            default: continue
            }
        }
        return Base64URL.decode(bytes: bytes)
    }

    /// Decides whether the presented secret admits the caller as `app`'s backend.
    /// - Returns: the server secret version that matched.
    public static func admit(
        app: App?,
        secrets: [SealedSecret],
        presentedSecret: String,
        at now: Date,
        box: SecretBox
    ) -> Result<Int, Refusal> {
        guard let app,
            let version = SecretVerifier.matchingVersion(of: presentedSecret, kind: .server, among: secrets, at: now, box: box)
        else { return .failure(.invalid) }
        guard app.status == .active else { return .failure(.appDisabled) }
        return .success(version)
    }
}
