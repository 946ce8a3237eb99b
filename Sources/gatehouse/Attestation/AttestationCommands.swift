// Attestation: attesters, proof-of-work challenges, attestation tokens (JWT, token binding), the gate.
// Serves seeds 001 (HTTP 428, EO-Attest-Token) and 003 (Approov-Token, pay binding, dynamic configuration).

import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore

/// Attestation operations at the host, the same operations the admin API runs.
func withAttesterOperations<T: Sendable>(
    _ common: CommonOptions,
    _ body: @Sendable (AttesterOperations, ChangeOrigin) async throws -> T
) async throws -> T {
    try await withOperatorStore(common) { store, configuration, origin in
        let box = try configuration.loadSecretBox().box
        try await prepareStore(store, box: box, migrate: false, logger: .init(label: "gatehouse"))
        let clock = SystemClock()
        let operations = AttesterOperations(
            access: AttesterAccess(
                store: store,
                apps: AppOperations(store: store, box: box, clock: clock),
                box: box,
                keys: SigningKeyRing(store: store.attestation, box: box, clock: clock),
                clock: clock,
                allowInternalEndpoints: configuration.stsPrivateEndpoints
            )
        )
        return try await body(operations, origin)
    }
}

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "The ES256 keys that sign attestation tokens and the SDK configuration.",
        subcommands: [Rotate.self, List.self]
    )

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new signing key active; the old one stays in the JWKS until its last token has expired."
        )
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let key = try await withAttesterOperations(common) { operations, origin in try await operations.keys.rotate(origin: origin) }
            print("active kid: \(key.kid)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the published signing keys, newest first.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let keys = try await withAttesterOperations(common) { operations, _ in try await operations.keys.all() }
            for key in keys {
                let state = key.retiredAt == nil ? "active" : "retired, published until \(key.publishedUntil!.ISO8601Format())"
                print("\(key.kid)\t\(key.createdAt.ISO8601Format())\t\(state)")
            }
        }
    }
}

struct AttesterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attester",
        abstract: "Manage attesters (attestation policies named by attestId).",
        subcommands: [Create.self, List.self, Disable.self, Enable.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an attester (proof-of-work, captcha or hardware attestation).")
        @Argument(help: "The app's appKey.") var appKey: String
        @Option(name: .customLong("id"), help: "The attestId.") var attestID: String
        @Option(help: "pow (default), captcha, pow+captcha, appAttest, androidKeyAttestation or playIntegrity.") var kind: String?
        @Option(help: "altcha-v1 (classic) or altcha-v2 (PBKDF2).") var format: String?
        @Option(help: "Classic: the largest secret number.") var maxNumber: Int?
        @Option(help: "v2: PBKDF2 iterations per attempt.") var cost: Int?
        @Option(help: "Token lifetime in seconds (60 to 43200).") var tokenLifetime: Int?
        @Option(help: "Header the token travels in (default EO-Attest-Token).") var tokenHeader: String?
        @Option(help: "Requests one token may open (default unlimited).") var maxUses: Int?
        @Option(help: "ES256 (default) or HS256.") var algorithm: String?
        @Option(help: "Header whose value tokens are bound to.") var bindHeader: String?
        @Option(parsing: .upToNextOption, help: "Gated routes as METHOD:/path/prefix, e.g. '*:/api/'.") var route: [String] = []
        @Flag(help: "Tokens only for devices that prove a hardware-attested key (always so for the hardware kinds).")
        var requireHardwareAttestation = false
        @Option(help: "With --require-hardware-attestation: also take Play Integrity verdicts, as ATTEST_ID:LEVEL (basic, device, strong).")
        var acceptPlayIntegrity: String?
        @OptionGroup var hardware: HardwareAttesterOptions
        @OptionGroup var common: CommonOptions

        /// The kind, with the proof-of-work format where there is work, the hardware requirement and the algorithm.
        static func describe(_ attester: Attester) -> String {
            var parts = [attester.kind.rawValue]
            if attester.kind.asksForWork { parts.append(attester.pow.format.rawValue) }
            if attester.requireHardwareAttestation && attester.kind.hardwarePlatform == nil { parts.append("requires hardware") }
            parts.append(attester.algorithm.rawValue)
            return parts.joined(separator: ", ")
        }

        func run() async throws {
            var change = AttesterChange()
            if requireHardwareAttestation { change.requireHardwareAttestation = true }
            if let acceptPlayIntegrity {
                let parts = acceptPlayIntegrity.split(separator: ":", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw ValidationError("--accept-play-integrity is ATTEST_ID:LEVEL, e.g. android-pi:strong.") }
                change.acceptPlayIntegrity = .some(try PlayIntegrityAcceptance(attestID: parts[0], minimumIntegrity: parts[1]))
            }
            try hardware.apply(to: &change, kind: kind)
            change.kind = kind
            change.powFormat = format
            change.maxNumber = maxNumber
            change.cost = cost
            change.tokenLifetimeSeconds = tokenLifetime
            change.tokenHeader = tokenHeader
            change.maxUses = maxUses
            change.algorithm = algorithm
            change.bindHeader = bindHeader
            change.routes = try route.map { text in
                guard let colon = text.firstIndex(of: ":") else { throw ValidationError("A route is METHOD:/path/prefix, e.g. '*:/api/'.") }
                return (String(text[..<colon]), String(text[text.index(after: colon)...]))
            }
            let finalChange = change
            let result = try await withAttesterOperations(common) { operations, origin in
                try await operations.createAttester(
                    try AppKey(validating: appKey),
                    attestID: try AttestID(validating: attestID),
                    change: finalChange,
                    origin: origin
                )
            }
            print("attester \(result.attester.attestID) created (\(Self.describe(result.attester)))")
            if let secret = result.sharedSecret { print("sharedSecret: \(secret)    (HS256 key, base64; shown once)") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's attesters.")
        @Argument(help: "The app's appKey.") var appKey: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let attesters = try await withAttesterOperations(common) { operations, _ in try await operations.attesters(try AppKey(validating: appKey))
            }
            for attester in attesters {
                let routes = attester.routes.map { "\($0.method):\($0.pathPrefix)" }.joined(separator: " ")
                print("\(attester.attestID)\t\(attester.status.rawValue)\t\(Create.describe(attester))\t\(attester.tokenHeader)\t\(routes)")
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an attester: no challenges, and its routes are no longer gated.")
        @Argument(help: "The app's appKey.") var appKey: String
        @Argument(help: "The attestId.") var attestID: String
        @OptionGroup var common: CommonOptions

        func run() async throws { try await setStatus("disabled", appKey, attestID, common) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable an attester again.")
        @Argument(help: "The app's appKey.") var appKey: String
        @Argument(help: "The attestId.") var attestID: String
        @OptionGroup var common: CommonOptions

        func run() async throws { try await setStatus("active", appKey, attestID, common) }
    }
}

private func setStatus(_ status: String, _ appKey: String, _ attestID: String, _ common: CommonOptions) async throws {
    var change = AttesterChange()
    change.status = status
    let finalChange = change
    let result = try await withAttesterOperations(common) { operations, origin in
        try await operations.updateAttester(
            try AppKey(validating: appKey),
            attestID: try AttestID(validating: attestID),
            change: finalChange,
            origin: origin
        )
    }
    print("attester \(result.attester.attestID) \(result.attester.status.rawValue)")
}
