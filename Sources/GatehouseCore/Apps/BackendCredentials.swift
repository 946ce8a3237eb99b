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
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = Data(base64Encoded: String(parts[1])),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return .failure(.malformed) }
        guard let appKey = try? AppKey(validating: String(text[..<colon])) else { return .failure(.invalid) }
        return .success((appKey, String(text[text.index(after: colon)...])))
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
