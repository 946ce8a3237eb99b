import ArgumentParser
import GatehouseCore

/// The settings of the hardware attester kinds, as `attester create` takes them.
struct HardwareAttesterOptions: ParsableArguments {
    @Option(help: "appAttest: the Apple team identifier (10 characters).") var teamId: String?
    @Option(parsing: .upToNextOption, help: "appAttest: the app's bundle identifiers.") var bundleId: [String] = []
    @Option(help: "appAttest: production (default) or development.") var environment: String = "production"
    @Option(parsing: .upToNextOption, help: "androidKeyAttestation: the app's package names.") var package: [String] = []
    @Option(parsing: .upToNextOption, help: "androidKeyAttestation: SHA-256 of each signing certificate, hex.") var signingDigest: [String] = []
    @Option(help: "androidKeyAttestation: TEE (default) or StrongBox.") var securityLevel: String = "TEE"
    @Flag(help: "androidKeyAttestation: accept software-only keys (emulators in testing).") var allowSoftware = false
    @Flag(help: "androidKeyAttestation: accept devices that did not boot a verified system.") var allowUnverifiedBoot = false
    @Flag(help: "androidKeyAttestation: accept devices with an unlocked bootloader.") var allowUnlockedBootloader = false
    @Option(help: "androidKeyAttestation: the oldest security patch level accepted, YYYYMM.") var minimumPatchLevel: Int?

    func apply(to change: inout AttesterChange, kind: String?) throws {
        switch kind {
        case AttesterKind.appAttest.rawValue:
            change.appAttest = try AppAttestPolicy.validated(teamID: teamId ?? "", bundleIDs: bundleId, environment: environment)
        case AttesterKind.androidKeyAttestation.rawValue:
            change.androidKeyAttestation = try AndroidKeyAttestationPolicy.validated(
                packageNames: package,
                signingCertificateDigests: signingDigest,
                securityLevel: securityLevel,
                allowSoftware: allowSoftware,
                requireVerifiedBoot: !allowUnverifiedBoot,
                requireDeviceLocked: !allowUnlockedBootloader,
                minimumOSPatchLevel: minimumPatchLevel
            )
        default:
            guard teamId == nil, bundleId.isEmpty, package.isEmpty, signingDigest.isEmpty else {
                throw ValidationError("--team-id, --bundle-id, --package and --signing-digest go with --kind appAttest or androidKeyAttestation.")
            }
        }
    }
}
