import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console/apps/:appKey/attesters...`: every kind of attester, created and changed through the same
/// `AttesterChange` (and so the same Core checks) as the admin API and the CLI.
struct ConsoleAttestersController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let attesters: AttesterOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/apps/:appKey/attesters", for: .console, use: list)
        routes.on(.post, "/console/apps/:appKey/attesters", for: .consoleChanges, use: create)
        routes.on(.get, "/console/apps/:appKey/attesters/:attestId", for: .console, use: attester)
        routes.on(.post, "/console/apps/:appKey/attesters/:attestId", for: .consoleChanges, use: update)
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let rows = try await attesters.attesters(appKey).map { attester in
            AttesterListPage.Row(
                attestId: attester.attestID.rawValue,
                kind: attester.kind.rawValue,
                status: attester.status.rawValue,
                tokenLifetime: attester.tokenLifetimeSeconds,
                hardware: attester.requiresHardware
            )
        }
        return pages.page(AttesterListPage(title: "Attesters of \(appKey)", appKey: appKey.rawValue, attesters: rows), caller: context.console)
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let form = context.form
        var change = try Self.change(form)
        change.kind = ConsoleForm.optional(form, "kind")
        try Self.applyHardware(form, to: &change)
        let result = try await attesters.createAttester(
            appKey,
            attestID: try AttestID(validating: form["attestId"] ?? ""),
            change: change,
            origin: context.origin
        )
        return try await shown(result, appKey: appKey, context: context, status: .created)
    }

    @Sendable func attester(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let attester = try await attesters.attester(appKey, attestID: try AttestID(validating: context.parameters.get("attestId") ?? ""))
        return page(attester, appKey: appKey, secret: nil, context: context, status: .ok)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        var change = try Self.change(context.form)
        change.status = ConsoleForm.optional(context.form, "status")
        change.enforcement = ConsoleForm.optional(context.form, "enforcement")
        let result = try await attesters.updateAttester(
            appKey,
            attestID: try AttestID(validating: context.parameters.get("attestId") ?? ""),
            change: change,
            origin: context.origin
        )
        return try await shown(result, appKey: appKey, context: context, status: .ok)
    }

    private func shown(
        _ result: AttesterOperations.AttesterResult,
        appKey: AppKey,
        context: Context,
        status: HTTPResponse.Status
    ) async throws -> Response {
        guard result.sharedSecret != nil else {
            return ConsolePages.seeOther("/console/apps/\(appKey)/attesters/\(result.attester.attestID.rawValue)")
        }
        return page(result.attester, appKey: appKey, secret: result.sharedSecret, context: context, status: status)
    }

    private func page(_ attester: Attester, appKey: AppKey, secret: String?, context: Context, status: HTTPResponse.Status) -> Response {
        let shown = AttesterPage(
            title: "Attester \(attester.attestID.rawValue)",
            appKey: appKey.rawValue,
            attestId: attester.attestID.rawValue,
            settings: ConsoleSetting.all(attester.snapshot),
            secret: secret,
            tokenLifetime: attester.tokenLifetimeSeconds,
            challengeLifetime: attester.challengeLifetimeSeconds,
            maxUses: attester.maxUses
        )
        return pages.page(shown, caller: context.console, status: status)
    }

    /// The settings every kind has; a blank field leaves the setting as it is (or at its default).
    static func change(_ form: [String: String]) throws -> AttesterChange {
        var change = AttesterChange()
        change.tokenLifetimeSeconds = try ConsoleForm.int(form, "tokenLifetimeSeconds")
        change.challengeLifetimeSeconds = try ConsoleForm.int(form, "challengeLifetimeSeconds")
        change.maxUses = try ConsoleForm.int(form, "maxUses")
        change.powFormat = ConsoleForm.optional(form, "powFormat")
        change.cost = try ConsoleForm.int(form, "powCost")
        return change
    }

    /// The hardware kinds' settings, from space-separated lists as the CLI takes them.
    static func applyHardware(_ form: [String: String], to change: inout AttesterChange) throws {
        func list(_ name: String) -> [String] { (form[name] ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) }
        switch change.kind {
        case AttesterKind.appAttest.rawValue:
            change.appAttest = try AppAttestPolicy.validated(
                teamID: form["teamId"] ?? "",
                bundleIDs: list("bundleIds"),
                environment: ConsoleForm.optional(form, "environment") ?? "production"
            )
        case AttesterKind.androidKeyAttestation.rawValue:
            change.androidKeyAttestation = try AndroidKeyAttestationPolicy.validated(
                packageNames: list("packageNames"),
                signingCertificateDigests: list("signingDigests"),
                securityLevel: ConsoleForm.optional(form, "securityLevel") ?? "TEE",
                allowSoftware: form["allowSoftware"] != nil,
                requireVerifiedBoot: form["allowUnverifiedBoot"] == nil,
                requireDeviceLocked: form["allowUnlockedBootloader"] == nil,
                minimumOSPatchLevel: try ConsoleForm.int(form, "minimumPatchLevel")
            )
        case AttesterKind.playIntegrity.rawValue:
            let (settings, credentials) = try playIntegrity(form, packages: list("packageNames"), digests: list("signingDigests"))
            (change.playIntegrity, change.playIntegrityCredentials) = (settings, credentials)
        default: break
        }
    }

    /// A `playIntegrity` attester's settings and secrets from the form; the secrets go to the sealed
    /// credentials and are never put back into a page.
    static func playIntegrity(
        _ form: [String: String],
        packages: [String],
        digests: [String]
    ) throws -> (PlayIntegritySettings, PlayIntegrityCredentials) {
        let policy = try PlayIntegrityPolicy.validated(
            packageName: packages.count == 1 ? packages[0] : "",
            certificateDigests: digests,
            minimumIntegrity: ConsoleForm.optional(form, "minimumIntegrity") ?? "device",
            allowVirtual: form["allowVirtual"] != nil,
            requirePlayRecognized: form["allowUnrecognized"] == nil,
            requireLicensed: form["requireLicensed"] != nil,
            maximumAgeSeconds: try ConsoleForm.int(form, "maximumAgeSeconds") ?? 300
        )
        let modes = [("modeClassic", "classic"), ("modeStandard", "standard")].filter { form[$0.0] != nil }.map(\.1)
        let settings = try PlayIntegritySettings.validated(policy: policy, modes: modes, decodeEndpoint: nil)
        let credentials = PlayIntegrityCredentials(
            decryptionKey: ConsoleForm.optional(form, "decryptionKey"),
            verificationKey: ConsoleForm.optional(form, "verificationKey"),
            serviceAccount: ConsoleForm.optional(form, "serviceAccount")
        )
        return (settings, credentials)
    }
}

extension ConsoleAttestersController {
    struct AttesterListPage: ConsolePage {
        static let template = "attesters"
        struct Row {
            let attestId: String
            let kind: String
            let status: String
            let tokenLifetime: Int
            let hardware: Bool
        }
        let title: String
        let appKey: String
        let attesters: [Row]
        let kinds = AttesterKind.allCases.map(\.rawValue)
    }

    struct AttesterPage: ConsolePage {
        static let template = "attester"
        let title: String
        let appKey: String
        let attestId: String
        let settings: [ConsoleSetting]
        /// The HS256 secret, shown once when it is made.
        let secret: String?
        let tokenLifetime: Int
        let challengeLifetime: Int
        let maxUses: Int?
    }
}

/// One stored setting of an attester or a role, as its snapshot names it.
struct ConsoleSetting {
    let name: String
    let value: String

    static func all(_ snapshot: AuditSnapshot) -> [ConsoleSetting] {
        snapshot.keys.sorted().map { ConsoleSetting(name: $0, value: ConsoleText.value(snapshot[$0]!)) }
    }
}
