import Foundation
import GatehouseCore

/// A hardware or Play Integrity attester's settings as the `hardware_settings` column keeps them: JSON,
/// since each kind has its own and none is queried by field.
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

    struct PlayIntegrityRow: Codable {
        let policy: PlayIntegrityPolicy
        let modes: [PlayIntegrityMode]
        let decodeEndpoint: String
    }

    var appAttest: AppAttestRow?
    var androidKeyAttestation: AndroidRow?
    var playIntegrity: PlayIntegrityRow?

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
        playIntegrity = attester.playIntegrity.map { PlayIntegrityRow(policy: $0.policy, modes: $0.modes, decodeEndpoint: $0.decodeEndpoint) }
        if appAttest == nil, androidKeyAttestation == nil, playIntegrity == nil { return nil }
    }

    var appAttestPolicy: AppAttestPolicy? {
        appAttest.map { AppAttestPolicy(teamID: $0.teamId, bundleIDs: $0.bundleIds, environment: $0.environment) }
    }

    var playIntegritySettings: PlayIntegritySettings? {
        playIntegrity.map { PlayIntegritySettings(policy: $0.policy, modes: $0.modes, decodeEndpoint: $0.decodeEndpoint) }
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
