import Foundation
import GatehouseCore

/// A hardware attester's settings as the `hardware_settings` column keeps them: JSON, since each
/// kind has its own and neither is queried by field.
struct HardwareSettingsRow: Codable {
    struct AppAttestRow: Codable {
        let teamId: String
        let bundleIds: [String]
        let environment: AppAttestEnvironment
    }

    struct AndroidRow: Codable {
        let packageNames: [String]
        let signingCertificateDigests: [String]
        let minimumSecurityLevel: AndroidSecurityLevel
        let requireVerifiedBoot: Bool
        let requireDeviceLocked: Bool
        let minimumOsPatchLevel: Int?
    }

    var appAttest: AppAttestRow?
    var androidKeyAttestation: AndroidRow?

    init?(_ attester: Attester) {
        appAttest = attester.appAttest.map { AppAttestRow(teamId: $0.teamID, bundleIds: $0.bundleIDs, environment: $0.environment) }
        androidKeyAttestation = attester.androidKeyAttestation.map {
            AndroidRow(
                packageNames: $0.packageNames,
                signingCertificateDigests: $0.signingCertificateDigestsHex,
                minimumSecurityLevel: $0.minimumSecurityLevel,
                requireVerifiedBoot: $0.requireVerifiedBoot,
                requireDeviceLocked: $0.requireDeviceLocked,
                minimumOsPatchLevel: $0.minimumOSPatchLevel
            )
        }
        if appAttest == nil, androidKeyAttestation == nil { return nil }
    }

    var appAttestPolicy: AppAttestPolicy? {
        appAttest.map { AppAttestPolicy(teamID: $0.teamId, bundleIDs: $0.bundleIds, environment: $0.environment) }
    }

    var androidPolicy: AndroidKeyAttestationPolicy? {
        get throws(StoreError) {
            guard let row = androidKeyAttestation else { return nil }
            var digests: [[UInt8]] = []
            for text in row.signingCertificateDigests {
                guard let digest = Hex.decode(text) else { throw .corruptRow("attester signing digest") }
                digests.append(digest)
            }
            return AndroidKeyAttestationPolicy(
                packageNames: row.packageNames,
                signingCertificateDigests: digests,
                minimumSecurityLevel: row.minimumSecurityLevel,
                requireVerifiedBoot: row.requireVerifiedBoot,
                requireDeviceLocked: row.requireDeviceLocked,
                minimumOSPatchLevel: row.minimumOsPatchLevel
            )
        }
    }
}
