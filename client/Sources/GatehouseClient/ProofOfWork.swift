import Crypto
import CryptoExtras
import Foundation
import GatehouseSigning

/// Solves Gatehouse's proof-of-work challenges, which are ALTCHA's: classic (find the number whose
/// SHA-256 with the salt is the challenge) and v2 (find the counter whose PBKDF2 key starts with the
/// prefix). Returns the widget payload (base64 of its JSON) the token endpoint takes.
enum ProofOfWork {
    enum Failure: Error { case unsolvable, malformed }

    static func solve(_ challenge: [String: Any], format: String) throws -> String {
        let json: [String: Any]
        if format == "altcha-v2" {
            guard let parameters = challenge["parameters"] as? [String: Any], let nonce = parameters["nonce"] as? String,
                let salt = parameters["salt"] as? String, let cost = parameters["cost"] as? Int, let prefix = parameters["keyPrefix"] as? String,
                let nonceBytes = Hex.decode(nonce), let saltBytes = Hex.decode(salt)
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
                if derived.hasPrefix(prefix) {
                    json = ["challenge": challenge, "solution": ["counter": Int(counter), "derivedKey": derived]]
                    break
                }
                guard counter < UInt32.max else { throw Failure.unsolvable }
                counter += 1
            }
        } else {
            guard let salt = challenge["salt"] as? String, let target = challenge["challenge"] as? String,
                let maxNumber = challenge["maxnumber"] as? Int, let signature = challenge["signature"] as? String
            else { throw Failure.malformed }
            guard let number = (0...maxNumber).first(where: { Hex.encode(SHA256.hash(data: Array((salt + String($0)).utf8))) == target }) else {
                throw Failure.unsolvable
            }
            json = ["algorithm": "SHA-256", "challenge": target, "number": number, "salt": salt, "signature": signature]
        }
        return try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).base64EncodedString()
    }
}
