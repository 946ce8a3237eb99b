import Crypto
import CryptoExtras
import Foundation

/// What a proof-of-work challenge is bound to: the attester and the device it was handed to. Both
/// travel inside the signed part of the challenge, so a solution cannot be carried to another device
/// or to an easier attester.
public struct PowBinding: Equatable, Sendable {
    public let attestID: String
    public let deviceID: String

    public init(attestID: String, deviceID: String) {
        self.attestID = attestID
        self.deviceID = deviceID
    }
}

/// A challenge in one of ALTCHA's two wire formats.
public enum PowChallenge: Equatable, Sendable {
    case v1(AltchaV1Challenge)
    case v2(AltchaV2Challenge)
}

/// ALTCHA classic: `challenge = hex(SHA-256(salt || number))`, `signature = hex(HMAC-SHA256(key, challenge))`.
public struct AltchaV1Challenge: Equatable, Sendable {
    public let algorithm = "SHA-256"
    public let challenge: String
    public let maxNumber: Int
    public let salt: String
    public let signature: String
}

/// ALTCHA v2: the client searches a counter whose PBKDF2 key starts with `keyPrefix`; the parameters
/// are signed as canonical JSON.
public struct AltchaV2Challenge: Equatable, Sendable {
    public struct Parameters: Equatable, Sendable {
        public let algorithm = "PBKDF2/SHA-256"
        public let cost: Int
        public let keyLength = 32
        public let keyPrefix: String
        public let nonce: String
        public let salt: String
        public let expiresAt: Int
        public let binding: PowBinding

        /// altcha-lib's `canonicalJSON`: keys sorted at every level, no whitespace. Every value here
        /// was checked to need no escaping.
        var canonicalJSON: String {
            #"{"algorithm":"\#(algorithm)","cost":\#(cost),"data":{"attestId":"\#(binding.attestID)","deviceId":"\#(binding.deviceID)"},"#
                + #""expiresAt":\#(expiresAt),"keyLength":\#(keyLength),"keyPrefix":"\#(keyPrefix)","nonce":"\#(nonce)","salt":"\#(salt)"}"#
        }
    }

    public let parameters: Parameters
    public let signature: String
}

/// A solution that verified: the key that makes its challenge single-use, and until when to remember it.
public struct SolvedPow: Equatable, Sendable {
    public let replayKey: String
    public let expiresAt: Date
}

/// A payload whose cheap checks held (shape, the challenge's signature, its binding, its expiry) and
/// whose work is not checked yet. The caller spends `replayKey` first and only then calls
/// `checkWork()`: a challenge is tried at most once whatever the outcome, so a payload with no work
/// done costs one HMAC and one insert, never a PBKDF2 run per attempt, and no one can make the server
/// search a classic challenge's number for them.
public struct PowClaim: Sendable {
    enum Work: Sendable {
        case sha256(input: [UInt8], expectedHex: String)
        case pbkdf2(password: [UInt8], salt: [UInt8], cost: Int, keyPrefix: String, derivedKeyHex: String)
    }

    public let replayKey: String
    public let expiresAt: Date
    let work: Work

    public func checkWork() throws(DomainError) -> SolvedPow {
        switch work {
        case .sha256(let input, let expectedHex):
            guard Hex.encode(SHA256.hash(data: input)) == expectedHex else {
                throw DomainError(.wrongSolution, "The number does not solve this challenge.", field: "payload")
            }
        case .pbkdf2(let password, let salt, let cost, let keyPrefix, let derivedKeyHex):
            let derived = try? KDF.Insecure.PBKDF2.deriveKey(
                from: password,
                salt: salt,
                using: .sha256,
                outputByteCount: 32,
                unsafeUncheckedRounds: cost
            )
            let recomputed = derived.map { $0.withUnsafeBytes { Hex.encode($0) } } ?? ""
            guard constantTimeEquals(Array(recomputed.utf8), Array(derivedKeyHex.utf8)), recomputed.hasPrefix(keyPrefix) else {
                throw DomainError(.wrongSolution, "The counter does not solve this challenge.", field: "payload")
            }
        }
        return SolvedPow(replayKey: replayKey, expiresAt: expiresAt)
    }
}

/// ALTCHA's formats, created and verified strictly. The reference is the `altcha` package on PyPI
/// (2.3.0, `altcha.v1` and `altcha.v2`); tests check against it.
public enum Altcha {
    public static let maximumPayloadLength = 4096

    public static func create<R: RandomNumberGenerator>(
        _ difficulty: PowDifficulty,
        binding: PowBinding,
        expiresAt: Date,
        key: SymmetricKey,
        using generator: inout R
    ) -> PowChallenge {
        let expires = Int(expiresAt.timeIntervalSince1970)
        switch difficulty.format {
        case .altchaV1:
            let salt =
                "\(Hex.encode(randomBytes(12, using: &generator)))?expires=\(expires)&attestId=\(binding.attestID)&deviceId=\(binding.deviceID)&"
            let number = Int.random(in: 0...difficulty.maxNumber, using: &generator)
            let challenge = Hex.encode(SHA256.hash(data: Array((salt + String(number)).utf8)))
            return .v1(
                AltchaV1Challenge(challenge: challenge, maxNumber: difficulty.maxNumber, salt: salt, signature: hmacHex(challenge, key))
            )
        case .altchaV2:
            let parameters = AltchaV2Challenge.Parameters(
                cost: difficulty.cost,
                keyPrefix: difficulty.keyPrefix,
                nonce: Hex.encode(randomBytes(16, using: &generator)),
                salt: Hex.encode(randomBytes(16, using: &generator)),
                expiresAt: expires,
                binding: binding
            )
            return .v2(AltchaV2Challenge(parameters: parameters, signature: hmacHex(parameters.canonicalJSON, key)))
        }
    }

    /// Reads a widget's payload (base64 of its JSON) in either format, for `binding`, at `now`, and
    /// makes the cheap checks; `PowClaim` says what the caller does next.
    public static func claim(payload: String, key: SymmetricKey, binding: PowBinding, at now: Date) throws(DomainError) -> PowClaim {
        guard payload.utf8.count <= maximumPayloadLength, let bytes = Data(base64Encoded: payload).map(Array.init),
            let members = JSONValue.parse(bytes)?.object
        else { throw malformed("payload is the base64 of the ALTCHA widget's JSON, at most 4096 characters.") }
        if members["solution"] != nil {
            return try claimV2(members, key: key, binding: binding, at: now)
        }
        return try claimV1(members, key: key, binding: binding, at: now)
    }

    private static func claimV1(
        _ object: [String: JSONValue],
        key: SymmetricKey,
        binding: PowBinding,
        at now: Date
    ) throws(DomainError)
        -> PowClaim
    {
        guard
            let members = JSONValue.object(object).members(required: ["algorithm", "challenge", "number", "salt", "signature"], optional: ["took"]),
            members["algorithm"] == .string("SHA-256"), let challenge = members["challenge"]?.string, Hex.isLowerHex(challenge, count: 64),
            let signature = members["signature"]?.string, Hex.isLowerHex(signature, count: 64),
            let number = members["number"]?.integer, (0...10_000_000_000).contains(number), let salt = members["salt"]?.string
        else { throw malformed("A classic payload has algorithm SHA-256, challenge, number, salt and signature, and nothing else but took.") }
        guard let parsed = V1Salt(salt) else {
            throw malformed("The salt is not one Gatehouse issued: its parameters are fixed, in order, and end with '&'.")
        }
        guard constantTimeEquals(Array(hmacHex(challenge, key).utf8), Array(signature.utf8)) else {
            throw DomainError(.challengeTampered, "The challenge's signature does not match.", field: "payload")
        }
        try check(binding: parsed.binding, expected: binding)
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(parsed.expires))
        guard now < expiresAt else { throw DomainError(.challengeExpired, "The challenge expired; fetch a new one.", field: "payload") }
        return PowClaim(
            replayKey: "v1:" + parsed.nonce,
            expiresAt: expiresAt,
            work: .sha256(input: Array((salt + String(number)).utf8), expectedHex: challenge)
        )
    }

    private static func claimV2(
        _ object: [String: JSONValue],
        key: SymmetricKey,
        binding: PowBinding,
        at now: Date
    ) throws(DomainError)
        -> PowClaim
    {
        let parameterKeys: Set<String> = ["algorithm", "cost", "data", "expiresAt", "keyLength", "keyPrefix", "nonce", "salt"]
        guard let members = JSONValue.object(object).members(required: ["challenge", "solution"]),
            let challenge = members["challenge"]?.members(required: ["parameters", "signature"]),
            let signature = challenge["signature"]?.string, Hex.isLowerHex(signature, count: 64),
            let parameters = challenge["parameters"]?.members(required: parameterKeys),
            parameters["algorithm"] == .string("PBKDF2/SHA-256"), parameters["keyLength"] == .integer(32),
            let cost = parameters["cost"]?.integer, PowDifficulty.costRange.contains(Int(cost)),
            let keyPrefix = parameters["keyPrefix"]?.string, PowDifficulty.keyPrefixLength.contains(keyPrefix.utf8.count),
            keyPrefix.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            let nonce = parameters["nonce"]?.string, Hex.isLowerHex(nonce, count: 32), let salt = parameters["salt"]?.string,
            Hex.isLowerHex(salt, count: 32), let expires = parameters["expiresAt"]?.integer, (0...9_999_999_999).contains(expires),
            let data = parameters["data"]?.members(required: ["attestId", "deviceId"]),
            let attestID = data["attestId"]?.string, (try? AttestID(validating: attestID)) != nil,
            let deviceID = data["deviceId"]?.string, (try? DeviceID(validating: deviceID)) != nil,
            let solution = members["solution"]?.members(required: ["counter", "derivedKey"], optional: ["time"]),
            let counter = solution["counter"]?.integer, (0...0xFFFF_FFFF).contains(counter),
            let derivedKey = solution["derivedKey"]?.string, Hex.isLowerHex(derivedKey, count: 64)
        else { throw malformed("A v2 payload is {challenge: {parameters, signature}, solution: {counter, derivedKey}} as Gatehouse issued it.") }
        let signed = AltchaV2Challenge.Parameters(
            cost: Int(cost),
            keyPrefix: keyPrefix,
            nonce: nonce,
            salt: salt,
            expiresAt: Int(expires),
            binding: PowBinding(attestID: attestID, deviceID: deviceID)
        )
        guard constantTimeEquals(Array(hmacHex(signed.canonicalJSON, key).utf8), Array(signature.utf8)) else {
            throw DomainError(.challengeTampered, "The challenge's signature does not match.", field: "payload")
        }
        try check(binding: signed.binding, expected: binding)
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(expires))
        guard now < expiresAt else { throw DomainError(.challengeExpired, "The challenge expired; fetch a new one.", field: "payload") }
        var password = Hex.decode(nonce)!
        withUnsafeBytes(of: UInt32(counter).bigEndian) { password.append(contentsOf: $0) }
        return PowClaim(
            replayKey: "v2:" + nonce,
            expiresAt: expiresAt,
            work: .pbkdf2(password: password, salt: Hex.decode(salt)!, cost: Int(cost), keyPrefix: keyPrefix, derivedKeyHex: derivedKey)
        )
    }

    /// The classic salt exactly as Gatehouse writes it: `<24 hex>?expires=<n>&attestId=<id>&deviceId=<id>&`.
    /// Reading it any looser is CVE-2025-68113: digits shifted between the salt and the number keep
    /// `SHA-256(salt || number)` and its signature, while changing what the salt says.
    struct V1Salt {
        let nonce: String
        let expires: Int
        let binding: PowBinding

        init?(_ salt: String) {
            let halves = salt.split(separator: "?", omittingEmptySubsequences: false)
            guard halves.count == 2, Hex.isLowerHex(String(halves[0]), count: 24), halves[1].hasSuffix("&") else { return nil }
            let pairs = halves[1].dropLast().split(separator: "&", omittingEmptySubsequences: false).map {
                $0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            }
            guard pairs.count == 3, pairs.allSatisfy({ $0.count == 2 }), pairs[0][0] == "expires", pairs[1][0] == "attestId",
                pairs[2][0] == "deviceId", let expires = Int(pairs[0][1]), pairs[0][1].utf8.count <= 10, String(expires) == pairs[0][1],
                (try? AttestID(validating: String(pairs[1][1]))) != nil, (try? DeviceID(validating: String(pairs[2][1]))) != nil
            else { return nil }
            nonce = String(halves[0])
            self.expires = expires
            binding = PowBinding(attestID: String(pairs[1][1]), deviceID: String(pairs[2][1]))
        }
    }

    private static func check(binding: PowBinding, expected: PowBinding) throws(DomainError) {
        guard binding == expected else {
            throw DomainError(.challengeMismatch, "This challenge was issued for another attester or device.", field: "payload")
        }
    }

    private static func malformed(_ detail: String) -> DomainError {
        DomainError(.invalidPowPayload, detail, field: "payload")
    }

    static func hmacHex(_ text: String, _ key: SymmetricKey) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: key))
    }

    static func randomBytes<R: RandomNumberGenerator>(_ count: Int, using generator: inout R) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
