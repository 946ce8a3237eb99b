import ArgumentParser
import GatehouseCore

/// The settings of the hardware and Play Integrity attester kinds, as `attester create` takes them.
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
    @OptionGroup var playIntegrity: PlayIntegrityAttesterOptions

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
        case AttesterKind.playIntegrity.rawValue:
            guard package.count == 1 else { throw ValidationError("--kind playIntegrity takes one --package.") }
            (change.playIntegrity, change.playIntegrityCredentials) = try playIntegrity.settings(package: package[0], digests: signingDigest)
        default:
            guard teamId == nil, bundleId.isEmpty, package.isEmpty, signingDigest.isEmpty else {
                throw ValidationError("--team-id, --bundle-id, --package and --signing-digest go with --kind appAttest or androidKeyAttestation.")
            }
        }
    }
}

/// A `playIntegrity` attester's own settings; `--package` and `--signing-digest` are shared with
/// androidKeyAttestation. Secrets come from files (a command line is visible to every user of the host).
struct PlayIntegrityAttesterOptions: ParsableArguments {
    @Option(parsing: .upToNextOption, help: "playIntegrity: classic, standard or both.") var mode: [String] = []
    @Option(help: "playIntegrity: basic, device (default) or strong.") var minimumIntegrity: String = "device"
    @Flag(help: "playIntegrity: accept MEETS_VIRTUAL_INTEGRITY (Google's emulators).") var allowVirtual = false
    @Flag(help: "playIntegrity: accept apps Play does not recognise.") var allowUnrecognized = false
    @Flag(help: "playIntegrity: require a licensed copy.") var requireLicensed = false
    @Option(help: "playIntegrity: the oldest verdict accepted, seconds (10 to 3600, default 300).") var maxAge: Int = 300
    @Option(help: "playIntegrity classic: a file holding Play Console's response decryption key (base64).") var decryptionKeyFile: String?
    @Option(help: "playIntegrity classic: Play Console's response verification key (base64 DER).") var verificationKey: String?
    @Option(help: "playIntegrity standard: the service account's JSON key file.") var serviceAccountFile: String?
    @Option(help: "playIntegrity standard: another decodeIntegrityToken base URL than Google's.") var decodeEndpoint: String?

    func settings(package: String, digests: [String]) throws -> (PlayIntegritySettings, PlayIntegrityCredentials) {
        let policy = try PlayIntegrityPolicy.validated(
            packageName: package,
            certificateDigests: digests,
            minimumIntegrity: minimumIntegrity,
            allowVirtual: allowVirtual,
            requirePlayRecognized: !allowUnrecognized,
            requireLicensed: requireLicensed,
            maximumAgeSeconds: maxAge
        )
        let settings = try PlayIntegritySettings.validated(policy: policy, modes: mode, decodeEndpoint: decodeEndpoint)
        let credentials = PlayIntegrityCredentials(
            decryptionKey: try decryptionKeyFile.map { try Self.read($0) },
            verificationKey: verificationKey,
            serviceAccount: try serviceAccountFile.map { try Self.read($0) }
        )
        return (settings, credentials)
    }

    static func read(_ path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("\(path) cannot be read.") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
