import Foundation

/// The operator's settings of the hardware attester kinds, checked as they arrive: what an attester
/// stores is always something the verifiers can use.
extension AppAttestPolicy {
    public static let bundleCount: ClosedRange<Int> = 1...20

    /// - Parameters:
    ///   - teamID: the Apple Developer team identifier, 10 upper-case letters and digits.
    ///   - bundleIDs: the app's bundle identifiers (an App Clip or extension has its own).
    ///   - environment: `production` or `development`, which picks the AAGUID attestations must carry.
    public static func validated(teamID: String, bundleIDs: [String], environment: String) throws(DomainError) -> AppAttestPolicy {
        guard teamID.utf8.count == 10, teamID.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else {
            throw DomainError(.invalidAttester, "appAttest.teamId is the 10-character Apple team identifier (A-Z, 0-9).", field: "appAttest.teamId")
        }
        let bundleCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-".utf8)
        guard bundleCount.contains(bundleIDs.count), Set(bundleIDs).count == bundleIDs.count,
            bundleIDs.allSatisfy({ (1...155).contains($0.utf8.count) && $0.utf8.allSatisfy(bundleCharacters.contains) })
        else {
            throw DomainError(
                .invalidAttester,
                "appAttest.bundleIds is 1 to 20 distinct bundle identifiers (A-Z, a-z, 0-9, '.', '-').",
                field: "appAttest.bundleIds"
            )
        }
        guard let parsed = AppAttestEnvironment(rawValue: environment) else {
            throw DomainError(.invalidAttester, "appAttest.environment is production or development.", field: "appAttest.environment")
        }
        return AppAttestPolicy(teamID: teamID, bundleIDs: bundleIDs, environment: parsed)
    }

    /// What the audit log records.
    var summary: [String] {
        ["teamId \(teamID)", "bundleIds \(bundleIDs.joined(separator: ","))", "environment \(environment.rawValue)"]
    }
}

extension AndroidKeyAttestationPolicy {
    public static let packageCount: ClosedRange<Int> = 1...20
    public static let digestCount: ClosedRange<Int> = 1...10
    /// YYYYMM, as the key description writes the patch level.
    public static let patchLevels: ClosedRange<Int> = 201_001...209_912

    /// - Parameters:
    ///   - packageNames: the app's package names.
    ///   - signingCertificateDigests: SHA-256 of each signing certificate, hex (colons allowed, as
    ///     `keytool` and `apksigner` print them).
    ///   - securityLevel: `TEE` or `StrongBox`, the least the key's hardware must be.
    ///   - allowSoftware: whether a software-only key is accepted after all (for emulators in testing).
    public static func validated(
        packageNames: [String],
        signingCertificateDigests: [String],
        securityLevel: String,
        allowSoftware: Bool,
        requireVerifiedBoot: Bool,
        requireDeviceLocked: Bool,
        minimumOSPatchLevel: Int?
    ) throws(DomainError) -> AndroidKeyAttestationPolicy {
        let packageCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._".utf8)
        guard packageCount.contains(packageNames.count), Set(packageNames).count == packageNames.count,
            packageNames.allSatisfy({ (1...255).contains($0.utf8.count) && $0.utf8.allSatisfy(packageCharacters.contains) })
        else {
            throw DomainError(
                .invalidAttester,
                "androidKeyAttestation.packageNames is 1 to 20 distinct package names (A-Z, a-z, 0-9, '.', '_').",
                field: "androidKeyAttestation.packageNames"
            )
        }
        let digests = signingCertificateDigests.map { Hex.decode($0.replacingOccurrences(of: ":", with: "").lowercased()) }
        guard digestCount.contains(digests.count), digests.allSatisfy({ $0?.count == 32 }) else {
            throw DomainError(
                .invalidAttester,
                "androidKeyAttestation.signingCertificateDigests is 1 to 10 SHA-256 digests in hex.",
                field: "androidKeyAttestation.signingCertificateDigests"
            )
        }
        let level = try minimumLevel(securityLevel, allowSoftware: allowSoftware)
        if let minimumOSPatchLevel {
            guard patchLevels.contains(minimumOSPatchLevel), (1...12).contains(minimumOSPatchLevel % 100) else {
                throw DomainError(
                    .invalidAttester,
                    "androidKeyAttestation.minimumOsPatchLevel is a month as YYYYMM, such as 202501.",
                    field: "androidKeyAttestation.minimumOsPatchLevel"
                )
            }
        }
        return AndroidKeyAttestationPolicy(
            packageNames: packageNames,
            signingCertificateDigests: digests.compactMap { $0 },
            minimumSecurityLevel: level,
            requireVerifiedBoot: requireVerifiedBoot,
            requireDeviceLocked: requireDeviceLocked,
            minimumOSPatchLevel: minimumOSPatchLevel
        )
    }

    private static func minimumLevel(_ securityLevel: String, allowSoftware: Bool) throws(DomainError) -> AndroidSecurityLevel {
        switch securityLevel {
        case "TEE": return allowSoftware ? .software : .trustedEnvironment
        case "StrongBox":
            guard !allowSoftware else {
                throw DomainError(
                    .invalidAttester,
                    "allowSoftware contradicts securityLevel StrongBox; use TEE with allowSoftware.",
                    field: "androidKeyAttestation.allowSoftware"
                )
            }
            return .strongBox
        default:
            throw DomainError(
                .invalidAttester,
                "androidKeyAttestation.securityLevel is TEE or StrongBox.",
                field: "androidKeyAttestation.securityLevel"
            )
        }
    }

    /// The operator's word for the level: TEE (with software allowed, for the software minimum) or StrongBox.
    public var securityLevelName: String { minimumSecurityLevel == .strongBox ? "StrongBox" : "TEE" }
    public var allowsSoftware: Bool { minimumSecurityLevel == .software }
    public var signingCertificateDigestsHex: [String] { signingCertificateDigests.map { Hex.encode($0) } }

    /// What the audit log records.
    var summary: [String] {
        [
            "packageNames \(packageNames.joined(separator: ","))", "signingCertificateDigests \(signingCertificateDigestsHex.joined(separator: ","))",
            "securityLevel \(securityLevelName)", "allowSoftware \(allowsSoftware)", "requireVerifiedBoot \(requireVerifiedBoot)",
            "requireDeviceLocked \(requireDeviceLocked)", "minimumOsPatchLevel \(minimumOSPatchLevel.map(String.init) ?? "none")",
        ]
    }
}
