import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends the app's API requests with an attestation token, as the seed's interceptor does: adds the
/// token header when a token is at hand, and on `428 Precondition Required` with
/// `EO-Attest-Challenge: <attestId>` attests and retries the request once with the new token.
public struct AttestingSession: Sendable {
    /// The response header naming the attester a 428 asks for.
    public static let challengeHeader = "EO-Attest-Challenge"

    let gatehouse: Gatehouse
    let session: URLSession
    /// The attester whose token goes on every request up front (nil: only after a 428).
    let attestID: String?

    /// A session attesting with `gatehouse`; with `attestID`, that attester's token goes on every
    /// request up front (prefetched or cached), otherwise only after a 428.
    public init(gatehouse: Gatehouse, session: URLSession = .shared, attestID: String? = nil) {
        self.gatehouse = gatehouse
        self.session = session
        self.attestID = attestID
    }

    /// Sends `request`; on a 428 with `EO-Attest-Challenge` attests and sends it once more. The
    /// second answer is returned whatever it is, so a request is never sent more than twice.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var first = request
        if let attestID, let token = await gatehouse.cachedToken(attestID: attestID) {
            first.setValue(token.token, forHTTPHeaderField: token.header)
        }
        let (data, response) = try await HTTPExchange.send(first, session: session)
        guard response.statusCode == 428, let challenged = response.value(forHTTPHeaderField: Self.challengeHeader), !challenged.isEmpty else {
            return (data, response)
        }
        await gatehouse.forget(attestID: challenged)
        let token = try await gatehouse.attest(attestID: challenged)
        var retry = request
        retry.setValue(token.token, forHTTPHeaderField: token.header)
        return try await HTTPExchange.send(retry, session: session)
    }
}
