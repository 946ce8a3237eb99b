// STS: roles, temporary credentials from upstream STS services, OSS self-signing, presigned URLs.
// Serves seed 004 (the OSS SDK's STS and self-signed modes and signed URLs).

import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseOperations

/// STS role operations at the host, the same operations the admin API runs.
func withRoleOperations<T: Sendable>(
    _ common: CommonOptions,
    _ body: @Sendable (STSRoleOperations, ChangeOrigin) async throws -> T
) async throws -> T {
    try await withOperatorStore(common) { store, configuration, origin in
        let box = try configuration.loadSecretBox().box
        try await prepareStore(store, box: box, migrate: false, logger: .init(label: "gatehouse"))
        let clock = SystemClock()
        let operations = STSRoleOperations(
            store: store.sts,
            apps: AppOperations(store: store, box: box, clock: clock),
            box: box,
            clock: clock,
            allowInternalEndpoints: configuration.stsPrivateEndpoints
        )
        return try await body(operations, origin)
    }
}

/// The upstream key pair comes from the environment, never from arguments that `ps` would show.
private func keyFromEnvironment(required: Bool) throws -> UpstreamKey? {
    let environment = ProcessInfo.processInfo.environment
    guard let id = environment["GATEHOUSE_ROLE_ACCESS_KEY_ID"], let secret = environment["GATEHOUSE_ROLE_ACCESS_KEY_SECRET"] else {
        if required {
            throw ValidationError("Set GATEHOUSE_ROLE_ACCESS_KEY_ID and GATEHOUSE_ROLE_ACCESS_KEY_SECRET to the role's upstream key pair.")
        }
        return nil
    }
    return try UpstreamKey(accessKeyID: id, accessKeySecret: secret)
}

struct RoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role",
        abstract: "Manage STS roles (credential vending). The key pair is read from GATEHOUSE_ROLE_ACCESS_KEY_ID / _SECRET.",
        subcommands: [Create.self, List.self, SetKey.self, Disable.self, Enable.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a role.")
        @Argument(help: "The app's appKey.") var appKey: String
        @Option(name: .customLong("id"), help: "The roleId.") var roleID: String
        @Option(help: "aws (any AWS-compatible STS) or alibaba.") var provider: String
        @Option(help: "The STS base URL.") var stsEndpoint: String
        @Option(help: "The region (us-east-1, cn-hangzhou).") var region: String
        @Option(help: "The role to assume.") var roleArn: String
        @Option(name: .customLong("attest-id"), help: "The attester whose tokens open this role.") var attestID: String
        @Option(help: "Credential lifetime (900 up to --max-duration).") var duration: Int?
        @Option(help: "The role's upstream maximum session duration.") var maxDuration: Int?
        @Option(help: "A file with the session policy template (${accountId}, ${deviceId}).") var policyFile: String?
        @Option(help: "Object storage base URL, for presigned URLs.") var storageEndpoint: String?
        @Option(help: "virtual or path.") var addressing: String?
        @Option(name: .customLong("external-id"), help: "ExternalId to send.") var externalID: String?
        @Flag(help: "Require a recent risk decision that is not reject.") var requireRiskDecision = false
        @Flag(help: "Require a device whose hardware attested it (App Attest, Android Key Attestation).") var requireHardwareAttestation = false
        @Option(help: "With --require-hardware-attestation: also take a Play Integrity verdict of basic, device or strong.")
        var acceptPlayIntegrity: String?
        @Flag(help: "Allow /v1/oss/sign (alibaba roles).") var selfSigned = false
        @OptionGroup var common: CommonOptions

        func run() async throws {
            var change = RoleChange()
            change.acceptPlayIntegrity = acceptPlayIntegrity
            change.provider = provider
            change.stsEndpoint = stsEndpoint
            change.region = region
            change.roleArn = roleArn
            change.attestID = attestID
            change.durationSeconds = duration
            change.maxDurationSeconds = maxDuration
            change.policyTemplate = try policyFile.map { try String(contentsOfFile: $0, encoding: .utf8) }
            change.storageEndpoint = storageEndpoint
            change.addressing = addressing
            change.externalID = externalID
            change.requireRiskDecision = requireRiskDecision
            change.requireHardwareAttestation = requireHardwareAttestation
            change.selfSigned = selfSigned
            let finalChange = change
            let key = try keyFromEnvironment(required: true)
            let role = try await withRoleOperations(common) { operations, origin in
                try await operations.createRole(
                    try AppKey(validating: appKey),
                    roleID: try RoleID(validating: roleID),
                    change: finalChange,
                    key: key,
                    origin: origin
                )
            }
            print("role \(role.roleID) created (\(role.provider.rawValue), \(role.durationSeconds) s)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's roles.")
        @Argument(help: "The app's appKey.") var appKey: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            for role in try await withRoleOperations(common, { operations, _ in try await operations.roles(try AppKey(validating: appKey)) }) {
                print("\(role.roleID)\t\(role.status.rawValue)\t\(role.provider.rawValue)\t\(role.roleArn)\t\(role.durationSeconds)")
            }
        }
    }

    struct SetKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace a role's upstream key pair (from the environment).")
        @Argument(help: "The app's appKey.") var appKey: String
        @Argument(help: "The roleId.") var roleID: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let key = try keyFromEnvironment(required: true)
            let role = try await withRoleOperations(common) { operations, origin in
                try await operations.updateRole(
                    try AppKey(validating: appKey),
                    roleID: try RoleID(validating: roleID),
                    change: RoleChange(),
                    key: key,
                    origin: origin
                )
            }
            print("role \(role.roleID): key pair replaced")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a role: no more credentials, signatures or URLs.")
        @Argument(help: "The app's appKey.") var appKey: String
        @Argument(help: "The roleId.") var roleID: String
        @OptionGroup var common: CommonOptions

        func run() async throws { try await setRoleStatus("disabled", appKey, roleID, common) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a role again.")
        @Argument(help: "The app's appKey.") var appKey: String
        @Argument(help: "The roleId.") var roleID: String
        @OptionGroup var common: CommonOptions

        func run() async throws { try await setRoleStatus("active", appKey, roleID, common) }
    }
}

private func setRoleStatus(_ status: String, _ appKey: String, _ roleID: String, _ common: CommonOptions) async throws {
    var change = RoleChange()
    change.status = status
    let finalChange = change
    let role = try await withRoleOperations(common) { operations, origin in
        try await operations.updateRole(
            try AppKey(validating: appKey),
            roleID: try RoleID(validating: roleID),
            change: finalChange,
            key: nil,
            origin: origin
        )
    }
    print("role \(role.roleID) \(role.status.rawValue)")
}
