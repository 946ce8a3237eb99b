/// A `playIntegrity` attester's settings, checked as they arrive (as `AppAttestPolicy.validated`
/// does for its kind): what an attester stores is always something the verifier can use.
extension PlayIntegrityPolicy {
    public static let digestCount: ClosedRange<Int> = 1...10
    /// The oldest verdict an operator may accept. A classic token's nonce is spent on first use
    /// anyway; the age bounds how long a captured token stays worth stealing before it is.
    public static let ages: ClosedRange<Int> = 10...3600

    /// - Parameters:
    ///   - packageName: the app's package name.
    ///   - certificateDigests: SHA-256 of each signing certificate, as Play Console shows it (hex, colons
    ///     allowed) or as the verdict carries it (base64url); stored as the verdict carries it.
    ///   - minimumIntegrity: `basic`, `device` or `strong`.
    public static func validated(
        packageName: String,
        certificateDigests: [String],
        minimumIntegrity: String,
        allowVirtual: Bool,
        requirePlayRecognized: Bool,
        requireLicensed: Bool,
        maximumAgeSeconds: Int
    ) throws(DomainError) -> PlayIntegrityPolicy {
        let packageCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._".utf8)
        guard (1...255).contains(packageName.utf8.count), packageName.utf8.allSatisfy(packageCharacters.contains) else {
            throw DomainError(
                .invalidAttester,
                "playIntegrity.packageName is the app's package name (A-Z, a-z, 0-9, '.', '_').",
                field: "playIntegrity.packageName"
            )
        }
        let verdictDigests = certificateDigests.compactMap(Self.digest)
        guard digestCount.contains(certificateDigests.count), verdictDigests.count == certificateDigests.count else {
            throw DomainError(
                .invalidAttester,
                "playIntegrity.certificateDigests is 1 to 10 SHA-256 digests, hex or base64url.",
                field: "playIntegrity.certificateDigests"
            )
        }
        guard let level = PlayIntegrityLevel(rawValue: minimumIntegrity), level != .virtual else {
            throw DomainError(
                .invalidAttester,
                "playIntegrity.minimumIntegrity is basic, device or strong.",
                field: "playIntegrity.minimumIntegrity"
            )
        }
        guard ages.contains(maximumAgeSeconds) else {
            throw DomainError(.invalidAttester, "playIntegrity.maximumAgeSeconds is 10 to 3600.", field: "playIntegrity.maximumAgeSeconds")
        }
        return PlayIntegrityPolicy(
            packageName: packageName,
            certificateDigests: verdictDigests,
            minimumIntegrity: level,
            allowVirtual: allowVirtual,
            requirePlayRecognized: requirePlayRecognized,
            requireLicensed: requireLicensed,
            maximumAgeSeconds: maximumAgeSeconds
        )
    }

    /// A digest as the verdict carries it (base64url of the 32 bytes, no padding), from hex with or
    /// without colons or from base64url; nil when it is neither.
    static func digest(_ text: String) -> String? {
        if let bytes = Hex.decode(text.replacingOccurrences(of: ":", with: "").lowercased()), bytes.count == 32 {
            return Base64URL.encode(bytes)
        }
        guard let bytes = Base64URL.decode(text), bytes.count == 32 else { return nil }
        return Base64URL.encode(bytes)
    }
}
