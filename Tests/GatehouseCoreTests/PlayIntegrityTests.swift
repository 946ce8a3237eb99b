import Crypto
import CryptoExtras
import Foundation
import GatehouseCore
import Testing

/// Classic Play Integrity tokens as a test device builds them (a JWS of the verdict, ES256, inside a JWE,
/// A256KW and A256GCM, as Google documents): read back, and each check of the verdict failing on its own.
/// tests/interop/play_integrity_interop.py builds them with joserfc instead, and reads this suite's sample.
struct PlayIntegrityTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let digest = "9lD7Dz3AjKHi2Cz4hAT3iiRVsivz3cRi-Bq6j7sZcxE"
    let signing = P256.Signing.PrivateKey()
    let aes = SymmetricKey(size: .bits256)
    var keys: PlayIntegrityKeys { PlayIntegrityKeys(decryption: aes, verification: signing.publicKey) }
    let policy = PlayIntegrityPolicy(packageName: "com.example.shop", certificateDigests: [Self.digest])

    static func verdict(_ change: (inout [String: Any]) -> Void = { _ in }) -> [UInt8] {
        var payload: [String: Any] = [
            "requestDetails": ["requestPackageName": "com.example.shop", "timestampMillis": "1800000000000", "nonce": "n-1"],
            "appIntegrity": [
                "appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": "com.example.shop", "certificateSha256Digest": [digest],
                "versionCode": "42",
            ],
            "deviceIntegrity": ["deviceRecognitionVerdict": ["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"]],
            "accountDetails": ["appLicensingVerdict": "LICENSED"],
        ]
        change(&payload)
        return Array((try? JSONSerialization.data(withJSONObject: payload)) ?? Data())
    }

    func token(_ payload: [UInt8], signer: P256.Signing.PrivateKey? = nil) -> String {
        let signed = JWSSigningKey.es256(kid: "play", key: signer ?? signing).sign(payload: payload, type: "JWT")
        return CompactJWE.encrypt(Array(signed.utf8), key: aes) ?? ""
    }

    @Test func aGenuineTokenIsReadWithItsFacts() throws {
        let facts = try PlayIntegrityClassic.verify(token(Self.verdict()), keys: keys, policy: policy, nonce: "n-1", at: Self.now).get()
        #expect(facts.integrity == .device && facts.licensing == "LICENSED" && facts.versionCode == 42 && !facts.riskyApps)
    }

    /// Each case: the verdict's part and field, its new value as JSON, and the refusal.
    @Test(arguments: [
        ("requestDetails", "nonce", #""n-2""#, PlayIntegrityRefusal.wrongNonce),
        ("requestDetails", "requestPackageName", #""com.example.other""#, .wrongPackage),
        ("requestDetails", "timestampMillis", #""1799999000000""#, .stale),
        ("requestDetails", "timestampMillis", #""1800000120000""#, .stale),
        ("appIntegrity", "appRecognitionVerdict", #""UNRECOGNIZED_VERSION""#, .unrecognizedApp),
        ("appIntegrity", "certificateSha256Digest", #"["AAAA"]"#, .wrongCertificate),
        ("deviceIntegrity", "deviceRecognitionVerdict", #"["MEETS_BASIC_INTEGRITY"]"#, .integrityTooLow),
        ("deviceIntegrity", "deviceRecognitionVerdict", #"["MEETS_VIRTUAL_INTEGRITY"]"#, .integrityTooLow),
        ("requestDetails", "timestampMillis", #""soon""#, .malformed),
        ("appIntegrity", "certificateSha256Digest", #""not a list""#, .malformed),
    ])
    func eachCheckRefusesOnItsOwn(part: String, field: String, json: String, refusal: PlayIntegrityRefusal) {
        let value = (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)) ?? NSNull()
        let payload = Self.verdict { payload in
            var section = payload[part] as? [String: Any] ?? [:]
            section[field] = value
            payload[part] = section
        }
        let answer = PlayIntegrityClassic.verify(token(payload), keys: keys, policy: policy, nonce: "n-1", at: Self.now)
        #expect(answer == .failure(refusal))
    }

    @Test func anotherKeyOrAnAlteredTokenIsRefused() {
        let genuine = token(Self.verdict())
        #expect(PlayIntegrityClassic.verdict(of: token(Self.verdict(), signer: P256.Signing.PrivateKey()), keys: keys) == .failure(.badSignature))
        var parts = genuine.split(separator: ".").map(String.init)
        var tag = Base64URL.decode(parts[4]) ?? []
        tag[0] ^= 1
        parts[4] = Base64URL.encode(tag)
        #expect(PlayIntegrityClassic.verdict(of: parts.joined(separator: "."), keys: keys) == .failure(.undecryptable))
        let elsewhere = PlayIntegrityKeys(decryption: SymmetricKey(size: .bits256), verification: signing.publicKey)
        #expect(PlayIntegrityClassic.verdict(of: genuine, keys: elsewhere) == .failure(.undecryptable))
        #expect(PlayIntegrityClassic.verdict(of: String(repeating: "a", count: 20_000), keys: keys) == .failure(.malformed))
    }

    @Test func virtualIntegrityCountsOnlyWhereAllowed() throws {
        var allowing = policy
        allowing.allowVirtual = true
        let payload = Self.verdict { $0["deviceIntegrity"] = ["deviceRecognitionVerdict": ["MEETS_VIRTUAL_INTEGRITY"]] }
        let facts = try PlayIntegrityClassic.verify(token(payload), keys: keys, policy: allowing, nonce: "n-1", at: Self.now).get()
        #expect(facts.integrity == .virtual)
    }

    static let serviceKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let serviceAccountJSON = String(
        decoding: try! JSONSerialization.data(withJSONObject: [
            "type": "service_account", "client_email": "gatehouse@example-project.iam.gserviceaccount.com",
            "private_key_id": "k1", "private_key": serviceKey.pkcs8PEMRepresentation,
            "token_uri": "https://oauth2.googleapis.com/token",
        ]),
        as: UTF8.self
    )

    /// The standard mode's assertion: RS256 over the claims Google's token endpoint reads.
    @Test func aServiceAccountSignsItsAssertion() throws {
        let account = try GoogleServiceAccount(json: Self.serviceAccountJSON)
        let assertion = account.assertion(at: Self.now)
        let parts = assertion.split(separator: ".").map(String.init)
        let claimBytes = try #require(Base64URL.decode(parts[1]))
        let claims = try #require(JSONValue.parse(claimBytes)?.object)
        #expect(claims["iss"]?.string == account.clientEmail && claims["aud"]?.string == "https://oauth2.googleapis.com/token")
        #expect(claims["scope"]?.string == GoogleServiceAccount.playIntegrityScope && claims["exp"]?.integer == 1_800_003_600)
        let signatureBytes = try #require(Base64URL.decode(parts[2]))
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureBytes)
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        #expect(Self.serviceKey.publicKey.isValidSignature(signature, for: signed, padding: .insecurePKCS1v1_5))
    }

    @Test(arguments: [
        "", "{}", #"{"type":"authorized_user","client_email":"a@b","private_key":"x"}"#,
        #"{"type":"service_account","client_email":"a@b","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}"#,
        String(repeating: " ", count: 20_000),
    ])
    func aKeyFileThatIsNotOneIsRefused(json: String) {
        #expect(throws: DomainError.self) { try GoogleServiceAccount(json: json) }
    }

    /// With GATEHOUSE_PLAY_INTEGRITY_SAMPLE set (.ci/run sets it), a token this device built, its keys
    /// and its verdict go to that file, for joserfc to decrypt and verify (play_integrity_interop.py),
    /// with a service account's assertion for PyJWT to verify.
    @Test func aSampleForTheIndependentReader() throws {
        guard let path = ProcessInfo.processInfo.environment["GATEHOUSE_PLAY_INTEGRITY_SAMPLE"] else { return }
        let payload = Self.verdict()
        let sample: [String: String] = [
            "token": token(payload), "payload": String(decoding: payload, as: UTF8.self),
            "decryptionKey": aes.withUnsafeBytes { Data($0).base64EncodedString() },
            "verificationKey": signing.publicKey.derRepresentation.base64EncodedString(),
            "assertion": try GoogleServiceAccount(json: Self.serviceAccountJSON).assertion(at: Date()),
            "serviceAccountPublicKey": Self.serviceKey.publicKey.pemRepresentation,
        ]
        try JSONSerialization.data(withJSONObject: sample).write(to: URL(fileURLWithPath: path))
    }

    /// An attester's settings as an operator gives them: digests as Play Console shows them (hex) or as
    /// the verdict carries them (base64url), the same digest either way.
    @Test func settingsAreCheckedAndDigestsReadEitherWay() throws {
        let hex = "F6:50:FB:0F:3D:C0:8C:A1:E2:D8:2C:F8:84:04:F7:8A:24:55:B2:2B:F3:DD:C4:62:F8:1A:BA:8F:BB:19:73:11"
        let policy = try PlayIntegrityPolicy.validated(
            packageName: "com.example.shop",
            certificateDigests: [hex, Self.digest],
            minimumIntegrity: "strong",
            allowVirtual: false,
            requirePlayRecognized: true,
            requireLicensed: false,
            maximumAgeSeconds: 300
        )
        #expect(policy.certificateDigests == [Self.digest, Self.digest] && policy.minimumIntegrity == .strong)
        let refused: [(String, [String], String, Int)] = [
            ("com.example/shop", [Self.digest], "device", 300), ("com.example.shop", [], "device", 300),
            ("com.example.shop", ["AAAA"], "device", 300), ("com.example.shop", [Self.digest], "virtual", 300),
            ("com.example.shop", [Self.digest], "device", 86_400),
        ]
        for (package, digests, level, age) in refused {
            #expect(throws: DomainError.self) {
                try PlayIntegrityPolicy.validated(
                    packageName: package,
                    certificateDigests: digests,
                    minimumIntegrity: level,
                    allowVirtual: false,
                    requirePlayRecognized: true,
                    requireLicensed: false,
                    maximumAgeSeconds: age
                )
            }
        }
    }
}

/// Where hardware is required, a Play Integrity token counts only where the operator accepts one, at
/// the level named: on an attester's gate, on an STS role.
struct PlayIntegrityAcceptanceTests {
    /// Claims as a token carries them (the type is decoded, not built, outside Core).
    static func claims(att: String, integrity: String) -> AttestationClaims {
        let json =
            #"{"iss":"g","aud":"app","sub":"d","did":"d","iat":0,"exp":1,"jti":"j","attestId":"a","att":"\#(att)","integrity":"\#(integrity)"}"#
        return try! JSONDecoder().decode(AttestationClaims.self, from: Data(json.utf8))
    }

    @Test func aVerdictIsNoHardwareUnlessAccepted() throws {
        let device = Self.claims(att: "play_integrity", integrity: "device")
        #expect(!device.isHardwareAttested)
        #expect(!device.meetsHardwareRequirement(acceptingPlayIntegrity: nil))
        #expect(device.meetsHardwareRequirement(acceptingPlayIntegrity: .basic))
        #expect(device.meetsHardwareRequirement(acceptingPlayIntegrity: .device))
        #expect(!device.meetsHardwareRequirement(acceptingPlayIntegrity: .strong))
        let forged = Self.claims(att: "play_integrity", integrity: "secure_enclave")
        #expect(!forged.meetsHardwareRequirement(acceptingPlayIntegrity: .basic), "a hardware level under play_integrity is no level")
        #expect(Self.claims(att: "android_key", integrity: "tee").meetsHardwareRequirement(acceptingPlayIntegrity: nil))

        var role = STSRole(
            appID: AppID(UUID()),
            roleID: try RoleID(validating: "uploads"),
            provider: .aws,
            stsEndpoint: "https://sts.amazonaws.com",
            region: "us-east-1",
            roleArn: "arn:aws:iam::123456789012:role/u",
            attestID: try AttestID(validating: "android-pi"),
            createdAt: Date()
        )
        #expect(role.admitsAttestation(of: device))
        role.requireHardwareAttestation = true
        #expect(!role.admitsAttestation(of: device))
        role.acceptPlayIntegrity = .strong
        #expect(!role.admitsAttestation(of: device))
        role.acceptPlayIntegrity = .device
        #expect(role.admitsAttestation(of: device))
        #expect(!role.admitsAttestation(of: Self.claims(att: "android_key", integrity: "software")))
    }

    @Test func anAcceptanceGoesWithHardwareOnly() throws {
        let now = Date()
        var attester = Attester(appID: AppID(UUID()), attestID: try AttestID(validating: "api"), createdAt: now, updatedAt: now)
        attester.acceptPlayIntegrity = PlayIntegrityAcceptance(attestID: try AttestID(validating: "android-pi"), minimumIntegrity: .strong)
        #expect(throws: DomainError.self) { try attester.validated() }
        attester.requireHardwareAttestation = true
        #expect(try attester.validated().acceptPlayIntegrity?.minimumIntegrity == .strong)
        #expect(throws: DomainError.self) { try PlayIntegrityAcceptance(attestID: "android-pi", minimumIntegrity: "virtual") }
    }
}
