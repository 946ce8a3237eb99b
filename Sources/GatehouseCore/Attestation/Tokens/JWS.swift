import Crypto
import Foundation

/// The JWS algorithms Gatehouse signs with: ES256 by default, HS256 for backends that already verify
/// shared-secret tokens (Approov's model). `none` and everything else are refused when parsing.
public enum JWSAlgorithm: String, Sendable, Codable, CaseIterable {
    case es256 = "ES256"
    case hs256 = "HS256"
}

/// A key that signs compact JWS: one signer per algorithm.
public enum JWSSigningKey: Sendable {
    case es256(kid: String, key: P256.Signing.PrivateKey)
    case hs256(SymmetricKey)

    public var algorithm: JWSAlgorithm {
        switch self {
        case .es256: .es256
        case .hs256: .hs256
        }
    }

    /// `header.payload.signature`, base64url without padding (RFC 7515 section 7.1).
    public func sign(payload: [UInt8], type: String) -> String {
        var header = #"{"alg":"\#(algorithm.rawValue)""#
        if case .es256(let kid, _) = self { header += #","kid":"\#(kid)""# }
        header += #","typ":"\#(type)"}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let signature: [UInt8]
        switch self {
        case .es256(_, let key):
            // swift-crypto's ECDSA signatures are randomised; the raw form is JWS's r || s.
            signature = Array((try? key.signature(for: Array(signingInput.utf8)).rawRepresentation) ?? Data())
        case .hs256(let key):
            signature = Array(HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: key))
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}

/// Why a compact JWS was refused before or at its signature check.
public enum JWSFailure: String, Error, Sendable {
    case malformed
    case unsupportedAlgorithm = "unsupported_algorithm"
    case unknownKey = "unknown_key"
    case badSignature = "bad_signature"
}

/// A compact JWS read strictly: three base64url parts, a JSON header naming ES256 or HS256, no `crit`.
public struct CompactJWS: Sendable {
    public static let maximumLength = 8192

    public let algorithm: JWSAlgorithm
    public let keyID: String?
    public let type: String?
    public let payload: [UInt8]
    private let signingInput: [UInt8]
    private let signature: [UInt8]

    public static func parse(_ text: String) -> Result<CompactJWS, JWSFailure> {
        // Over the UTF-8 bytes: splitting the String itself walks grapheme clusters, which was most
        // of a gate verification's parse (docs/PERFORMANCE.md).
        let utf8 = text.utf8
        guard utf8.count <= maximumLength, let firstDot = utf8.firstIndex(of: UInt8(ascii: ".")),
            let secondDot = utf8[utf8.index(after: firstDot)...].firstIndex(of: UInt8(ascii: ".")),
            let headerBytes = Base64URL.decode(bytes: utf8[..<firstDot]),
            let payload = Base64URL.decode(bytes: utf8[utf8.index(after: firstDot)..<secondDot]),
            let signature = Base64URL.decode(bytes: utf8[utf8.index(after: secondDot)...]),
            let header = JSONValue.parse(headerBytes)?.object,
            case .string(let alg)? = header["alg"]
        else { return .failure(.malformed) }
        guard let algorithm = JWSAlgorithm(rawValue: alg), header["crit"] == nil else { return .failure(.unsupportedAlgorithm) }
        var keyID: String?
        if let kid = header["kid"] {
            guard case .string(let value) = kid else { return .failure(.malformed) }
            keyID = value
        }
        return .success(
            CompactJWS(
                algorithm: algorithm,
                keyID: keyID,
                type: header["typ"]?.string,
                payload: payload,
                signingInput: Array(utf8[..<secondDot]),
                signature: signature
            )
        )
    }

    public func isSigned(by key: P256.Signing.PublicKey) -> Bool {
        guard algorithm == .es256, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(parsed, for: signingInput)
    }

    public func isSigned(by key: SymmetricKey) -> Bool {
        guard algorithm == .hs256 else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: key)
    }
}
