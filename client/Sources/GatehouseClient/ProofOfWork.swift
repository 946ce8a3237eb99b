import Crypto
import CryptoExtras
import Foundation
import GatehouseAPI
import GatehouseSigning

/// Solves Gatehouse's proof-of-work challenges, which are ALTCHA's: classic (find the number whose
/// SHA-256 with the salt is the challenge) and v2 (find the counter whose PBKDF2 key starts with the
/// prefix). Returns the widget payload (base64 of its JSON) the token endpoint takes.
enum ProofOfWork {
    enum Failure: Error { case unsolvable, malformed }

    typealias Challenge = Components.Schemas.AltchaChallenge
    typealias Format = Components.Schemas.AttestChallengeResponse.FormatPayload

    /// ALTCHA v2's payload: the challenge as it came, and the counter with its key.
    struct V2Payload: Encodable {
        struct Solution: Encodable {
            let counter: Int
            let derivedKey: String
        }
        let challenge: Challenge
        let solution: Solution
    }

    /// ALTCHA's classic payload.
    struct V1Payload: Encodable {
        var algorithm = "SHA-256"
        let challenge: String
        let number: Int
        let salt: String
        let signature: String
    }

    static func solve(_ challenge: Challenge, format: Format) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        switch format {
        case .altchaV2: return try encoder.encode(try solveV2(challenge)).base64EncodedString()
        case .altchaV1: return try encoder.encode(try solveV1(challenge)).base64EncodedString()
        }
    }

    static func solveV2(_ challenge: Challenge) throws -> V2Payload {
        guard let parameters = challenge.parameters, let nonce = parameters.nonce, let salt = parameters.salt, let cost = parameters.cost,
            let prefix = parameters.keyPrefix, let nonceBytes = Hex.decode(nonce), let saltBytes = Hex.decode(salt)
        else { throw Failure.malformed }
        var counter: UInt32 = 0
        while true {
            var password = nonceBytes
            withUnsafeBytes(of: counter.bigEndian) { password.append(contentsOf: $0) }
            let key = try KDF.Insecure.PBKDF2.deriveKey(
                from: password,
                salt: saltBytes,
                using: .sha256,
                outputByteCount: 32,
                unsafeUncheckedRounds: cost
            )
            let derived = key.withUnsafeBytes { Hex.encode($0) }
            if derived.hasPrefix(prefix) { return V2Payload(challenge: challenge, solution: .init(counter: Int(counter), derivedKey: derived)) }
            guard counter < UInt32.max else { throw Failure.unsolvable }
            counter += 1
        }
    }

    static func solveV1(_ challenge: Challenge) throws -> V1Payload {
        guard let salt = challenge.salt, let target = challenge.challenge, let maxNumber = challenge.maxnumber else { throw Failure.malformed }
        guard let number = (0...maxNumber).first(where: { Hex.encode(SHA256.hash(data: Array((salt + String($0)).utf8))) == target }) else {
            throw Failure.unsolvable
        }
        return V1Payload(challenge: target, number: number, salt: salt, signature: challenge.signature)
    }
}
