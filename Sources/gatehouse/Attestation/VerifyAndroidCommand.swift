import ArgumentParser
import Foundation
import GatehouseCore

extension VerifyAttestationCommand {
    struct Android: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An Android key attestation chain (PEM, leaf first).")
        @Option(help: "A PEM file with the chain, leaf first (repeat to give one certificate per file).") var chain: [String]
        @Option(help: "The attestation challenge the key was generated with, base64.") var nonce: String
        @Option(help: "An accepted package name (repeat for several).") var package: [String]
        @Option(help: "An accepted signing certificate SHA-256, hex (repeat for several).") var signingDigest: [String]
        @Option(help: "software, tee or strongbox: the lowest accepted security level.") var securityLevel: String = "tee"
        @Flag(help: "Require a verified boot.") var requireVerifiedBoot = false
        @Flag(help: "Require a locked bootloader.") var requireLocked = false
        @Option(help: "The lowest accepted OS patch level, YYYYMM.") var minimumPatchLevel: Int?
        @Option(help: "Google's revocation status list (JSON file).") var revocationList: String?
        @OptionGroup var time: VerifyAttestationCommand.Time

        func run() async throws {
            let levels: [String: AndroidSecurityLevel] = ["software": .software, "tee": .trustedEnvironment, "strongbox": .strongBox]
            guard let level = levels[securityLevel] else { throw ValidationError("--security-level is software, tee or strongbox") }
            let digests = try signingDigest.map { text in
                guard text.count == 64, let bytes = Hex.decode(text.lowercased()) else {
                    throw ValidationError("--signing-digest '\(text)' is not 64 hex digits")
                }
                return bytes
            }
            let policy = AndroidKeyAttestationPolicy(
                packageNames: package,
                signingCertificateDigests: digests,
                minimumSecurityLevel: level,
                requireVerifiedBoot: requireVerifiedBoot,
                requireDeviceLocked: requireLocked,
                minimumOSPatchLevel: minimumPatchLevel
            )
            let pem = try chain.map { try String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n")
            let revoked = try revocationList.map { try AttestationRevocationList(json: Data(contentsOf: URL(fileURLWithPath: $0))) }
            try await Verdict.report {
                let key = try await AndroidKeyAttestation.verify(
                    chain: try AttestationChain.derBlocks(pem: pem),
                    nonce: try Verdict.base64(nonce, "nonce"),
                    policy: policy,
                    roots: try time.roots(platform: PlatformRoots.googleHardwareAttestation),
                    revoked: revoked ?? AttestationRevocationList(serials: []),
                    at: try time.date()
                )
                return ["packageName": key.packageName, "securityLevel": String(key.securityLevel.rawValue)]
            }
        }
    }
}
