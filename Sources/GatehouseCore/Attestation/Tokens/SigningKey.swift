import Crypto
import Foundation

/// One of the service's ES256 signing keys. The newest unretired key signs; retired keys stay
/// published in the JWKS until every token they signed has expired.
public struct SigningKey: Sendable {
    /// The longest a token can live (an attester's maximum token lifetime) plus the time an instance
    /// may keep signing with a key it has not yet seen retired (its key-cache refresh).
    public static let retiredKeyPublication = TimeInterval(AttesterPolicy.tokenLifetime.upperBound + 300)

    public let kid: String
    public let privateKey: P256.Signing.PrivateKey
    /// Kept from the start, with its bytes: every gated request verifies under it, and deriving it from
    /// the private key each time is a point conversion per request.
    public let published: PublishedKey
    public var publicKey: P256.Signing.PublicKey { published.publicKey }
    public let createdAt: Date
    public var retiredAt: Date?

    public init(privateKey: P256.Signing.PrivateKey, createdAt: Date, retiredAt: Date? = nil) {
        let publicKey = privateKey.publicKey
        self.published = PublishedKey(publicKey)
        self.kid = JWK(publicKey: publicKey, kid: "").thumbprint
        self.privateKey = privateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }

    public static func generate(at now: Date) -> SigningKey {
        SigningKey(privateKey: P256.Signing.PrivateKey(), createdAt: now)
    }

    public var publishedUntil: Date? { retiredAt?.addingTimeInterval(Self.retiredKeyPublication) }

    public func isPublished(at now: Date) -> Bool { publishedUntil.map { now < $0 } ?? true }

    public var signer: JWSSigningKey { .es256(kid: kid, key: privateKey) }

    public var jwk: JWK { JWK(publicKey: publicKey, kid: kid) }

    /// The private scalar, for sealing at rest.
    public var sealable: [UInt8] { Array(privateKey.rawRepresentation) }
}

/// A public EC key as JWKS publishes it (RFC 7517, RFC 7518 section 6.2).
public struct JWK: Codable, Equatable, Sendable {
    public let kty: String
    public let crv: String
    public let x: String
    public let y: String
    public let kid: String
    public let use: String
    public let alg: String

    public init(publicKey: P256.Signing.PublicKey, kid: String) {
        let point = Array(publicKey.x963Representation.dropFirst())
        kty = "EC"
        crv = "P-256"
        x = Base64URL.encode(point[0..<32])
        y = Base64URL.encode(point[32..<64])
        self.kid = kid
        use = "sig"
        alg = "ES256"
    }

    /// RFC 7638: SHA-256 over the required members in lexicographic order, base64url.
    public var thumbprint: String {
        let canonical = #"{"crv":"\#(crv)","kty":"\#(kty)","x":"\#(x)","y":"\#(y)"}"#
        return Base64URL.encode(SHA256.hash(data: Array(canonical.utf8)))
    }

    public var publicKey: P256.Signing.PublicKey? {
        guard let xBytes = Base64URL.decode(x), let yBytes = Base64URL.decode(y), xBytes.count == 32, yBytes.count == 32 else { return nil }
        return try? P256.Signing.PublicKey(x963Representation: [0x04] + xBytes + yBytes)
    }
}
