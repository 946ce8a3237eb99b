import Crypto
import CryptoExtras
import Foundation

/// A Google Cloud service account as its JSON key file gives it: what standard Play Integrity requests
/// need to call `decodeIntegrityToken`. Its RS256-signed assertion buys an OAuth access token
/// (RFC 7523, Google's "server to server" flow). Only this signs RS256 in Gatehouse, and only for this:
/// the attestation tokens Gatehouse issues stay ES256 or HS256 (`JWSAlgorithm`).
public struct GoogleServiceAccount: Sendable {
    public let clientEmail: String
    public let privateKeyID: String?
    public let tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// The scope Play Integrity's decode call needs.
    public static let playIntegrityScope = "https://www.googleapis.com/auth/playintegrity"
    /// A key file is a few kilobytes; this bounds what an operator's paste makes us parse.
    public static let maximumJSONLength = 16_384

    /// The key file's JSON: `type` `service_account`, `client_email`, `private_key` (PKCS #8 PEM, RSA of
    /// 2048 bits or more), and optionally `private_key_id` and `token_uri` (Google's by default).
    public init(json text: String) throws(DomainError) {
        func refuse(_ detail: String) -> DomainError { DomainError(.invalidAttester, detail, field: "serviceAccount") }
        guard text.utf8.count <= Self.maximumJSONLength, let object = JSONValue.parse(Array(text.utf8))?.object else {
            throw refuse("The service account is the JSON of its key file, at most 16 KiB.")
        }
        guard object["type"]?.string == "service_account", let email = object["client_email"]?.string, email.contains("@"),
            let pem = object["private_key"]?.string
        else { throw refuse("A service account key file has type service_account, client_email and private_key.") }
        guard let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem), key.keySizeInBits >= 2048 else {
            throw refuse("The service account's private_key is not an RSA key of 2048 bits or more in PEM.")
        }
        clientEmail = email
        privateKeyID = object["private_key_id"]?.string
        tokenURI = object["token_uri"]?.string ?? "https://oauth2.googleapis.com/token"
        privateKey = key
    }

    /// The signed assertion for the token endpoint: issued now, valid an hour (Google's longest), for
    /// `scope`, addressed to the token endpoint.
    public func assertion(scope: String = Self.playIntegrityScope, at now: Date) -> String {
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        var header: [String: JSONValue] = ["alg": .string("RS256"), "typ": .string("JWT")]
        if let privateKeyID { header["kid"] = .string(privateKeyID) }
        let claims: [String: JSONValue] = [
            "iss": .string(clientEmail), "scope": .string(scope), "aud": .string(tokenURI), "iat": .integer(issued),
            "exp": .integer(issued + 3600),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let headerBytes = (try? encoder.encode(JSONValue.object(header))) ?? Data()
        let claimBytes = (try? encoder.encode(JSONValue.object(claims))) ?? Data()
        let signingInput = Base64URL.encode(headerBytes) + "." + Base64URL.encode(claimBytes)
        // PKCS #1 v1.5 is what RS256 is (RFC 7518 3.3); swift-crypto names it insecure for new designs.
        let signature = (try? privateKey.signature(for: Array(signingInput.utf8), padding: .insecurePKCS1v1_5).rawRepresentation) ?? Data()
        return signingInput + "." + Base64URL.encode(signature)
    }
}
