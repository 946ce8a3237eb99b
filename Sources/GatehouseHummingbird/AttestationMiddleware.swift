import Crypto
import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// The gate, in-process, for Swift backends on Hummingbird: checks the attestation token of every
/// request that passes through it, offline against Gatehouse's JWKS (cached), and answers the SDK's
/// `428 Precondition Required` with `EO-Attest-Challenge` when the client must attest.
///
/// Put it on the routes one attester gates (a router group). Limited-use tokens (with a `lim`
/// claim) cannot be counted offline: they are refused unless `countUse` is given, which should call
/// Gatehouse's introspection with `consume: true`.
public struct AttestationMiddleware<Context: RequestContext>: RouterMiddleware {
    public struct Configuration: Sendable {
        public var appKey: AppKey
        public var attestID: AttestID
        public var tokenHeader: String
        public var bindHeader: String?
        /// HS256 attesters' shared secrets, by attestId (base64 of the bytes, as Gatehouse returns them).
        public var sharedSecrets: [String: String]
        /// Only tokens of a device whose hardware attested it (an `att` claim) pass, as the gate does
        /// for an attester with `requireHardwareAttestation` or of a hardware kind.
        public var requireHardwareAttestation: Bool
        /// Where hardware is required, a Play Integrity verdict at or above this level passes too, as
        /// the gate does for an attester's `acceptPlayIntegrity`; nil: hardware only.
        public var acceptPlayIntegrity: PlayIntegrityLevel?
        /// In `monitor` every request goes on to the handler, with `X-Gatehouse-Attest-Verdict` saying
        /// what the token was (on the request the handler reads, and on the response), as the gate does
        /// for an attester in monitor.
        public var enforcement: AttesterEnforcement

        public init(
            appKey: AppKey,
            attestID: AttestID,
            tokenHeader: String = "EO-Attest-Token",
            bindHeader: String? = nil,
            sharedSecrets: [String: String] = [:],
            requireHardwareAttestation: Bool = false,
            acceptPlayIntegrity: PlayIntegrityLevel? = nil,
            enforcement: AttesterEnforcement = .enforce
        ) {
            self.requireHardwareAttestation = requireHardwareAttestation
            self.acceptPlayIntegrity = acceptPlayIntegrity
            self.enforcement = enforcement
            self.appKey = appKey
            self.attestID = attestID
            self.tokenHeader = tokenHeader
            self.bindHeader = bindHeader
            self.sharedSecrets = sharedSecrets
        }
    }

    let configuration: Configuration
    let jwks: JWKSCache
    let countUse: (@Sendable (AttestationClaims) async throws -> Bool)?
    let verifiedTokens = VerifiedTokens()

    public init(_ configuration: Configuration, jwks: JWKSCache, countUse: (@Sendable (AttestationClaims) async throws -> Bool)? = nil) {
        self.configuration = configuration
        self.jwks = jwks
        self.countUse = countUse
    }

    static var verdictHeader: HTTPField.Name { HTTPField.Name("X-Gatehouse-Attest-Verdict")! }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let failure = try await check(request)
        guard configuration.enforcement == .monitor else {
            if let failure { return challenge(failure) }
            return try await next(request, context)
        }
        // The client's own verdict header never reaches the handler: only the one said here.
        let verdict = failure.map(AttestVerdict.init) ?? .valid
        var head = request.head
        head.headerFields[Self.verdictHeader] = verdict.rawValue
        var response = try await next(Request(head: head, body: request.body), context)
        response.headers[Self.verdictHeader] = verdict.rawValue
        return response
    }

    /// Nil for a token that opens the route, else why not.
    func check(_ request: Request) async throws -> AttestationTokenFailure? {
        let token = HTTPField.Name(configuration.tokenHeader).flatMap { request.headers[$0] }
        let bound = configuration.bindHeader.flatMap { HTTPField.Name($0) }.flatMap { request.headers[$0] }
        let verified = try await AttestationToken.verify(
            token,
            appKey: configuration.appKey,
            attestID: configuration.attestID,
            boundValue: bound,
            requireBinding: configuration.bindHeader != nil,
            at: Date(),
            verified: verifiedTokens
        ) { request in
            var keys = AttestationVerificationKeys(published: [:])
            if let kid = request.keyID, let key = try await jwks.key(kid: kid) { keys.published[kid] = key }
            for (attestID, secret) in configuration.sharedSecrets {
                if let bytes = Data(base64Encoded: secret) { keys.sharedSecrets[attestID] = SymmetricKey(data: bytes) }
            }
            return keys
        }
        switch verified {
        case .failure(let reason):
            return reason
        case .success(let claims):
            if configuration.requireHardwareAttestation, !claims.meetsHardwareRequirement(acceptingPlayIntegrity: configuration.acceptPlayIntegrity) {
                return .hardwareRequired
            }
            if claims.lim != nil {
                guard let countUse, try await countUse(claims) else { return .usedUp }
            }
            return nil
        }
    }

    private func challenge(_ reason: AttestationTokenFailure) -> Response {
        let body =
            #"{"type":"urn:gatehouse:problem:attestation_required","title":"Attestation required","status":428,"#
            + #""code":"attestation_required","attestId":"\#(configuration.attestID)","reason":"\#(reason.rawValue)"}"#
        return Response(
            status: .preconditionRequired,
            headers: [
                .contentType: "application/problem+json", HTTPField.Name("EO-Attest-Challenge")!: configuration.attestID.rawValue,
                HTTPField.Name("X-Gatehouse-Attest-Reason")!: reason.rawValue,
            ],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }
}
