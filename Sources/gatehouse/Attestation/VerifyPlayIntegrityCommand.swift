import ArgumentParser
import Foundation
import GatehouseCore

extension VerifyAttestationCommand {
    /// A classic Play Integrity token, read with the app's own response keys: what an operator runs to
    /// check the keys they pasted from Play Console, and what tests/interop/play_integrity_interop.py
    /// runs on the tokens joserfc builds.
    struct PlayIntegrity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "play-integrity",
            abstract: "A classic Play Integrity token (compact JWE), with the app's decryption and verification keys."
        )
        @Option(help: "The integrity token.") var token: String
        // A file, not the key itself: a secret on the command line is in the process list and the shell's history.
        @Option(help: "A file holding Play Console's decryption key (base64 of 32 bytes).") var decryptionKeyFile: String
        @Option(help: "Play Console's verification key, base64 of its DER.") var verificationKey: String
        @Option(help: "The app's package name.") var package: String
        @Option(help: "An accepted signing certificate SHA-256, base64url as Play gives it (repeat for several).") var certificate: [String]
        @Option(help: "The nonce the app requested the token with.") var nonce: String
        @Option(help: "basic, device or strong: the lowest accepted device verdict.") var minimumIntegrity: String = "device"
        @Flag(help: "Accept MEETS_VIRTUAL_INTEGRITY (Google's recognised emulators).") var allowVirtual = false
        @Flag(help: "Accept an app Play does not recognise.") var allowUnrecognized = false
        @Flag(help: "Require LICENSED.") var requireLicensed = false
        @Option(help: "The oldest verdict accepted, in seconds.") var maxAge: Int = 300
        @OptionGroup var time: VerifyAttestationCommand.Time

        func run() async throws {
            guard let level = PlayIntegrityLevel(rawValue: minimumIntegrity), level != .virtual else {
                throw ValidationError("--minimum-integrity is basic, device or strong")
            }
            let secret = try String(contentsOfFile: decryptionKeyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let keys = try PlayIntegrityKeys(decryptionKey: secret, verificationKey: verificationKey)
            let policy = PlayIntegrityPolicy(
                packageName: package,
                certificateDigests: certificate,
                minimumIntegrity: level,
                allowVirtual: allowVirtual,
                requirePlayRecognized: !allowUnrecognized,
                requireLicensed: requireLicensed,
                maximumAgeSeconds: maxAge
            )
            let line: [String: String]
            switch PlayIntegrityClassic.verify(token, keys: keys, policy: policy, nonce: nonce, at: try time.date()) {
            case .success(let facts):
                line = [
                    "verdict": "accepted", "integrity": facts.integrity?.rawValue ?? "", "appRecognition": facts.appRecognition,
                    "licensing": facts.licensing ?? "", "deviceActivityLevel": facts.deviceActivityLevel ?? "",
                    "riskyApps": String(facts.riskyApps), "playProtect": facts.playProtect ?? "",
                ]
            case .failure(let refusal):
                line = ["verdict": "refused", "code": refusal.rawValue]
            }
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            if line["verdict"] != "accepted" { throw ExitCode(1) }
        }
    }
}
