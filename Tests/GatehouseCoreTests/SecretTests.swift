import Crypto
import Foundation
import Testing

@testable import GatehouseCore

@Suite struct SecretBoxTests {
    let box = try! SecretBox(masterKey: Array(repeating: 7, count: 32))

    @Test func sealedSecretsOpenOnlyInTheirOwnRow() throws {
        let sealed = box.seal(Array("s3cret".utf8), context: "app-secret:a:sdk:1")
        #expect(try box.open(sealed, context: "app-secret:a:sdk:1") == Array("s3cret".utf8))
        #expect(throws: DomainError.self) { try box.open(sealed, context: "app-secret:b:sdk:1") }
        #expect(!sealed.contains(subsequence: Array("s3cret".utf8)))
    }

    @Test func aTamperedCiphertextDoesNotOpen() {
        var sealed = box.seal(Array("s3cret".utf8), context: "c")
        sealed[sealed.count - 1] ^= 1
        #expect(throws: DomainError.self) { try box.open(sealed, context: "c") }
    }

    @Test func anotherMasterKeyFailsTheKeyCheck() throws {
        let other = try SecretBox(masterKey: Array(repeating: 8, count: 32))
        let check = box.makeKeyCheck()
        try box.verifyKeyCheck(check)
        #expect(throws: DomainError.self) { try other.verifyKeyCheck(check) }
    }

    @Test func masterKeysMustBe32BytesOfBase64() throws {
        #expect(throws: DomainError.self) { try SecretBox(base64MasterKey: "not base64!") }
        #expect(throws: DomainError.self) { try SecretBox(base64MasterKey: Data(count: 16).base64EncodedString()) }
        _ = try SecretBox(base64MasterKey: SecretBox.generateBase64MasterKey() + "\n")
    }
}

@Suite struct SecretRotationTests {
    let box = try! SecretBox(masterKey: Array(repeating: 1, count: 32))
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func makeApp() throws -> App {
        var generator = SystemRandomNumberGenerator()
        return try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: start, using: &generator)
    }

    @Test func initialSecretsHaveTheSDKShapes() throws {
        var generator = SystemRandomNumberGenerator()
        let issued = issueInitialSecrets(for: try makeApp(), at: start, box: box, using: &generator)
        let sdk = try #require(issued[.sdk]).plaintext
        let server = try #require(issued[.server]).plaintext
        #expect(sdk.count == 32 && sdk.allSatisfy { $0.isLetter || $0.isNumber })
        #expect(server.hasPrefix("gsk_") && server.count == 44)
        #expect(try issued[.sdk]!.stored.open(with: box) == sdk)
    }

    @Test func oldAndNewBothVerifyDuringTheOverlapThenOnlyNew() throws {
        let app = try makeApp()
        var generator = SystemRandomNumberGenerator()
        let first = issueInitialSecrets(for: app, at: start, box: box, using: &generator)[.server]!
        let rotation = try SecretRotation.plan(
            app: app,
            kind: .server,
            existing: [first.stored],
            overlapSeconds: 600,
            at: start,
            box: box,
            using: &generator
        )
        var old = first.stored
        old.retiresAt = rotation.retirements[1]
        let all = [old, rotation.issued.stored]
        let during = start.addingTimeInterval(599)
        let after = start.addingTimeInterval(600)
        #expect(SecretVerifier.matchingVersion(of: first.plaintext, kind: .server, among: all, at: during, box: box) == 1)
        #expect(SecretVerifier.matchingVersion(of: rotation.issued.plaintext, kind: .server, among: all, at: during, box: box) == 2)
        #expect(SecretVerifier.matchingVersion(of: first.plaintext, kind: .server, among: all, at: after, box: box) == nil)
        #expect(SecretVerifier.matchingVersion(of: rotation.issued.plaintext, kind: .server, among: all, at: after, box: box) == 2)
        #expect(SecretVerifier.matchingVersion(of: first.plaintext, kind: .sdk, among: all, at: during, box: box) == nil)
    }

    /// A server secret is kept as its SHA-256, with no sealed copy; one sealed by an earlier build still
    /// verifies beside it (a rolling upgrade), and neither verifies as the other kind.
    @Test func aServerSecretIsComparedByItsHash() throws {
        let app = try makeApp()
        var generator = SystemRandomNumberGenerator()
        let issued = issueInitialSecrets(for: app, at: start, box: box, using: &generator)[.server]!
        #expect(issued.stored.sealed.isEmpty && issued.stored.verifier == CredentialDigest.of(issued.plaintext))
        #expect(throws: DomainError.self) { try issued.stored.open(with: box) }
        let legacyText = "gsk_" + String(repeating: "L", count: 40)
        let legacy = SealedSecret(
            appID: app.id,
            kind: .server,
            version: 2,
            sealed: box.seal(Array(legacyText.utf8), context: SealedSecret.sealingContext(appID: app.id, kind: .server, version: 2)),
            createdAt: start,
            retiresAt: nil
        )
        let both = [issued.stored, legacy]
        #expect(SecretVerifier.matchingVersion(of: issued.plaintext, kind: .server, among: both, at: start, box: box) == 1)
        #expect(SecretVerifier.matchingVersion(of: legacyText, kind: .server, among: both, at: start, box: box) == 2)
        #expect(SecretVerifier.matchingVersion(of: issued.plaintext + "x", kind: .server, among: both, at: start, box: box) == nil)
        #expect(SecretVerifier.matchingVersion(of: issued.plaintext, kind: .sdk, among: both, at: start, box: box) == nil)
    }

    @Test func aSecondRotationEndsTheFirstOverlapAtOnce() throws {
        let app = try makeApp()
        var generator = SystemRandomNumberGenerator()
        var v1 = issueInitialSecrets(for: app, at: start, box: box, using: &generator)[.sdk]!.stored
        v1.retiresAt = start.addingTimeInterval(3600)
        let v2 = SealedSecret.seal("x", appID: app.id, kind: .sdk, version: 2, at: start, box: box)
        let rotation = try SecretRotation.plan(
            app: app,
            kind: .sdk,
            existing: [v1, v2],
            overlapSeconds: 60,
            at: start,
            box: box,
            using: &generator
        )
        #expect(rotation.issued.stored.version == 3)
        #expect(rotation.retirements == [1: start, 2: start.addingTimeInterval(60)])
    }

    @Test(arguments: [-1, 2_592_001])
    func overlapOutsideItsRangeIsRefused(overlap: Int) throws {
        var generator = SystemRandomNumberGenerator()
        #expect(throws: DomainError.self) {
            try SecretRotation.plan(app: try makeApp(), kind: .sdk, existing: [], overlapSeconds: overlap, at: start, box: box, using: &generator)
        }
    }

    @Test func disabledAppsCannotRotate() throws {
        var app = try makeApp()
        app.status = .disabled
        var generator = SystemRandomNumberGenerator()
        #expect(throws: DomainError(.appDisabled, "App \(app.appKey) is disabled; enable it first.", field: "appKey")) {
            try SecretRotation.plan(app: app, kind: .sdk, existing: [], overlapSeconds: 0, at: start, box: box, using: &generator)
        }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}

@Suite struct ServerKeyDerivationTests {
    /// Devices hold keys derived this way (`ZToken.deviceKey`): the bytes fed must stay the parts joined
    /// by a newline. The expected values are Python's `hmac.new(key, "\n".join(parts).encode(), sha256)`.
    @Test func aMACIsOverThePartsJoinedByNewlines() {
        let key = SymmetricKey(data: Array(repeating: UInt8(7), count: 32))
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(ServerKeys.mac(key, ["app", "é", "", "3"])) == "be5eba0a097c5446febb1cfca1946bccbfafdb2d972f33ce3f84e5afb27155f0")
        #expect(hex(ServerKeys.mac(key, [])) == "9dac6a74401b46ed9b489d0e19d68d1b13cc6b5090352fdcfa5bd74df4e69d87")
    }
}
