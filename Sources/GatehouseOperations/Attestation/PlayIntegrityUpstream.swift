import GatehouseCore

/// Google's side of standard Play Integrity: an access token bought with the service account's
/// assertion, then `decodeIntegrityToken`. The server's `PlayIntegrityClient` is the one
/// implementation (an HTTP client, so it lives with the server); operations see only this.
public protocol PlayIntegrityUpstream: Sendable {
    /// The verdict Google decoded from a standard token: the JSON of its `tokenPayloadExternal`.
    func decode(
        _ token: String,
        settings: PlayIntegritySettings,
        account: GoogleServiceAccount
    ) async -> Result<[UInt8], PlayIntegrityUpstreamFailure>
}

/// Why Google gave no verdict.
public enum PlayIntegrityUpstreamFailure: Error, Sendable, Equatable {
    /// Google refused the token itself (400): the device sent something that is not a token of this app.
    case tokenRefused(String)
    /// Google did not answer in time, answered 5xx or garbled, or the breaker is open: nothing the
    /// device can fix now; it may retry after `retryAfter` seconds.
    case unavailable(String, retryAfter: Int)
    /// The operator's settings stand in the way: Google refused the service account, or an endpoint is
    /// not one Gatehouse may call. Answered as `unavailable` to the device, but no sign of Google's
    /// outage, so it opens no breaker.
    case misconfigured(String, retryAfter: Int)
}
