import GatehouseCore

/// The role's own STS, called for temporary credentials. The server's `STSClient` is the one
/// implementation (an HTTP client, so it lives with the server); operations see only this.
public protocol STSUpstream: Sendable {
    /// Whether roles may name plain `http` and internal addresses (`GATEHOUSE_STS_PRIVATE_ENDPOINTS`).
    var allowInternalEndpoints: Bool { get }
    func assumeRole(_ call: AssumeRoleCall, provider: STSProvider) async -> Result<TemporaryCredentials, UpstreamFailure>
}
