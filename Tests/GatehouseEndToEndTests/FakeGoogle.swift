import CryptoExtras
import Foundation
import GatehouseCore
import Hummingbird
import NIOCore

/// Google's two endpoints for standard Play Integrity, on loopback, as strict as Google about what it
/// reads: the token endpoint verifies the service account's assertion (RS256 by the account's key,
/// audience this endpoint, unexpired, the Play Integrity scope) before it issues an access token, and
/// the decode endpoint answers only that token. Tokens named `google-slow`, `google-500` and
/// `google-400` make it answer late (once the test releases it), fail, or refuse the token.
final class FakeGoogle: Sendable {
    let accountKey: _RSA.Signing.PublicKey
    let tokenURI = Locked("")
    let verdicts = LockedMap<String, [UInt8]>()
    let tokensIssued = Locked(0)
    let decodeCalls = Locked(0)
    /// Whether the slow answer went out, and whether the test let it go.
    let slowAnswered = Locked(false)
    let slowReleased = Locked(false)
    let accessToken = "ya29.test-\(UUID().uuidString)"

    init(accountKey: _RSA.Signing.PublicKey) { self.accountKey = accountKey }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("token") { request, _ -> Response in
            let form = String(buffer: try await request.body.collect(upTo: 65_536))
            let fields = Dictionary(
                form.split(separator: "&").map { pair -> (String, String) in
                    let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                    return (parts.first ?? "", parts.count > 1 ? parts[1] : "")
                },
                uniquingKeysWith: { first, _ in first }
            )
            guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = fields["assertion"],
                self.accepts(assertion)
            else { return Self.json(.badRequest, #"{"error":"invalid_grant"}"#) }
            self.tokensIssued.update { $0 += 1 }
            return Self.json(.ok, #"{"access_token":"\#(self.accessToken)","expires_in":3599,"token_type":"Bearer"}"#)
        }
        router.post("v1/:call") { request, context -> Response in
            self.decodeCalls.update { $0 += 1 }
            guard context.parameters.get("call") == "\(PlayIntegrityFlowTests.package):decodeIntegrityToken",
                request.headers[.authorization] == "Bearer \(self.accessToken)"
            else { return Self.json(.unauthorized, #"{"error":{"code":401}}"#) }
            let body = JSONValue.parse(Array(buffer: try await request.body.collect(upTo: 65_536)))
            guard let token = body?.object?["integrity_token"]?.string else { return Self.json(.badRequest, "{}") }
            switch token {
            case "google-slow":
                // Until the test has seen Gatehouse's answer (at most 20 s, should Gatehouse wait for it).
                for _ in 0..<1000 where !self.slowReleased.value { try await Task.sleep(for: .milliseconds(20)) }
                self.slowAnswered.set(true)
                return Self.json(.ok, "{}")
            case "google-500": return Self.json(.internalServerError, #"{"error":{"code":500}}"#)
            default:
                guard let payload = self.verdicts.get(token) else { return Self.json(.badRequest, #"{"error":{"code":400}}"#) }
                return Self.json(.ok, #"{"tokenPayloadExternal":\#(String(decoding: payload, as: UTF8.self))}"#)
            }
        }
        return router
    }

    private func accepts(_ assertion: String) -> Bool {
        let parts = assertion.split(separator: ".").map(String.init)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]).flatMap({ JSONValue.parse($0)?.object }),
            let claims = Base64URL.decode(parts[1]).flatMap({ JSONValue.parse($0)?.object }), let signature = Base64URL.decode(parts[2])
        else { return false }
        let now = Int64(Date().timeIntervalSince1970)
        guard header["alg"]?.string == "RS256", claims["aud"]?.string == tokenURI.value,
            claims["scope"]?.string == GoogleServiceAccount.playIntegrityScope, let expiry = claims["exp"]?.integer, expiry > now,
            let issued = claims["iat"]?.integer, issued <= now + 60
        else { return false }
        return accountKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature),
            for: Array((parts[0] + "." + parts[1]).utf8),
            padding: .insecurePKCS1v1_5
        )
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// A value shared by the test and the stand-in's handlers.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}

final class LockedMap<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Key: Value] = [:]

    func get(_ key: Key) -> Value? { lock.withLock { stored[key] } }
    func set(_ key: Key, _ value: Value) { lock.withLock { stored[key] = value } }
}
