import ArgumentParser
import Foundation
import GatehouseCore
import X509

/// Gatehouse's verdict on one device attestation, offline, with the same Core code the server runs:
/// for an operator asking why a device was refused, and for `.ci/run`, which compares it with
/// pyattest's on the shared vectors. Prints one JSON line; exits 0 when accepted, 1 when refused.
struct VerifyAttestationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-attestation",
        abstract: "Verify an App Attest attestation or assertion, an Android key attestation chain, or a classic Play Integrity token, offline.",
        subcommands: [Apple.self, AppleAssertion.self, Android.self, PlayIntegrity.self]
    )

    struct Time: ParsableArguments {
        @Option(help: "Verify as of this time (ISO 8601); now when absent.")
        var at: String?
        @Option(help: "A PEM file of extra roots to trust beside the platform's (a test device's root).")
        var root: String?

        func date() throws -> Date { try Self.date(at) }

        static func date(_ text: String?) throws -> Date {
            guard let text else { return Date() }
            guard let date = ISO8601DateFormatter.fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text) else {
                throw ValidationError("'\(text)' is not an ISO 8601 time")
            }
            return date
        }

        func roots(platform: String) throws -> [Certificate] {
            var pem = platform
            if let root { pem += "\n" + (try String(contentsOfFile: root, encoding: .utf8)) }
            return try AttestationChain.certificates(pem: pem)
        }
    }

    /// A key's attestation: what both App Attest subcommands verify first.
    struct AppAttestKeyOptions: ParsableArguments {
        @Option(help: "The attestation object, base64.") var object: String
        @Option(help: "The key id, base64.") var keyID: String
        @Option(help: "The team identifier.") var team: String
        @Option(help: "A bundle identifier (repeat for several).") var bundle: [String]
        @Option(help: "production or development.") var environment: AppAttestEnvironment = .production

        var policy: AppAttestPolicy { AppAttestPolicy(teamID: team, bundleIDs: bundle, environment: environment) }

        func verify(clientDataHash: String, at time: Date, roots: [Certificate]) async throws -> AppAttestKey {
            try await AppAttest.verifyAttestation(
                try Verdict.base64(object, "object"),
                keyID: try Verdict.base64(keyID, "key-id"),
                clientDataHash: try Verdict.base64(clientDataHash, "client-data-hash"),
                policy: policy,
                roots: roots,
                at: time
            )
        }
    }

    struct Apple: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An App Attest attestation object (base64).")
        @OptionGroup var key: AppAttestKeyOptions
        @Option(help: "SHA-256 of the client data, base64.") var clientDataHash: String
        @OptionGroup var time: Time

        func run() async throws {
            try await Verdict.report {
                let attested = try await key.verify(
                    clientDataHash: clientDataHash,
                    at: try time.date(),
                    roots: try time.roots(platform: PlatformRoots.appleAppAttestation)
                )
                return ["bundleId": attested.bundleID, "publicKey": Data(attested.publicKey).base64EncodedString()]
            }
        }
    }

    struct AppleAssertion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apple-assertion",
            abstract: "An App Attest assertion (base64) by a key whose attestation object is given too."
        )
        @Option(help: "The assertion, base64.") var assertion: String
        @Option(help: "SHA-256 of the assertion's client data, base64.") var clientDataHash: String
        @Option(help: "The counter stored before this assertion.") var previousCounter: UInt32 = 0
        @OptionGroup var key: AppAttestKeyOptions
        @Option(help: "SHA-256 of the attestation's client data, base64.") var attestationClientDataHash: String
        @Option(help: "When the key was attested (ISO 8601).") var attestedAt: String?
        @OptionGroup var time: Time

        func run() async throws {
            try await Verdict.report {
                let attested = try await key.verify(
                    clientDataHash: attestationClientDataHash,
                    at: try Time.date(attestedAt),
                    roots: try time.roots(platform: PlatformRoots.appleAppAttestation)
                )
                let counter = try AppAttest.verifyAssertion(
                    try Verdict.base64(assertion, "assertion"),
                    clientDataHash: try Verdict.base64(clientDataHash, "client-data-hash"),
                    key: attested,
                    policy: key.policy,
                    previousCounter: previousCounter
                )
                return ["counter": String(counter)]
            }
        }
    }
}

extension AppAttestEnvironment: ExpressibleByArgument {}

extension ISO8601DateFormatter {
    static var fractional: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

/// One JSON line with the verdict, and the exit status that says it.
enum Verdict {
    static func report(_ verify: () async throws -> [String: String]) async throws {
        var line: [String: String]
        var accepted = false
        do {
            line = try await verify()
            line["verdict"] = "accepted"
            accepted = true
        } catch let error as DomainError {
            line = ["verdict": "refused", "code": error.code.rawValue, "detail": error.detail]
        }
        let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
        if !accepted { throw ExitCode(1) }
    }

    static func base64(_ text: String, _ name: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: text) else { throw ValidationError("--\(name) is not base64") }
        return Array(data)
    }
}
