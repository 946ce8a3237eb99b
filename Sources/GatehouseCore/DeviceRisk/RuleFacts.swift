import Foundation

/// The facts a decision was made of, as the variables a rule's expression names
/// (`RuleVariables.environment`): built once per query, after the built-in tags and score.
public enum RuleFacts {
    public static func values(_ query: JudgedQuery, listHits: [RiskListEntry], verdict: RiskVerdict) -> [String: ExpressionValue] {
        var token: [String: ExpressionValue] = ["state": .string(query.state.rawValue)]
        if let age = query.facts.tokenAge { token["age"] = duration(age) }
        var client: [String: ExpressionValue] = ["address": .string(query.clientAddress.description)]
        if let agent = query.userAgent { client["userAgent"] = .string(agent) }
        let hits = Set(listHits.map(\.kind))
        let counts =
            query.facts.velocity ?? Velocity(deviceEventsLastMinute: 0, deviceAccountsLastDay: 0, accountDevicesLastDay: 0, ipDevicesLastHour: 0)
        return [
            "token": .object("Token", token),
            "event": .int(Int64(query.eventID.rawValue)),
            "account": .string(query.accountID.rawValue),
            "client": .object("Client", client),
            "device": .object("Device", fields(of: query.device)),
            "velocity": .object(
                "Velocity",
                [
                    "deviceEventsLastMinute": .int(Int64(counts.deviceEventsLastMinute)),
                    "deviceAccountsLastDay": .int(Int64(counts.deviceAccountsLastDay)),
                    "accountDevicesLastDay": .int(Int64(counts.accountDevicesLastDay)),
                    "ipDevicesLastHour": .int(Int64(counts.ipDevicesLastHour)),
                    "addressAttestationsLastHour": .int(Int64(counts.attestations.addressLastHour)),
                    "networkAttestationsLastHour": .int(Int64(counts.attestations.networkLastHour)),
                    "accountAttestationsLastDay": .int(Int64(counts.attestations.accountLastDay)),
                ]
            ),
            "lists": .object(
                "Lists",
                ["deny": .bool(hits.contains(.deny)), "allow": .bool(hits.contains(.allow)), "challenge": .bool(hits.contains(.challenge))]
            ),
            "tags": .list(verdict.tags.map { .string($0.tag) }),
            "score": .int(Int64(verdict.score)),
            "now": timestamp(query.at),
        ]
    }

    static func fields(of device: Device?) -> [String: ExpressionValue] {
        guard let device else {
            return ["known": .bool(false), "signals": .map([:]), "attestationFailed": .bool(false), "appsDetected": .list([])]
        }
        var signals: [ExpressionValue.MapKey: ExpressionValue] = [:]
        for name in EnvironmentSignals.named.map(\.0) { signals[.string(name)] = .bool(device.environment.names.contains(name)) }
        var fields: [String: ExpressionValue] = [
            "known": .bool(true), "id": .string(device.id.rawValue), "firstSeen": timestamp(device.firstSeen), "lastSeen": timestamp(device.lastSeen),
            "collectionMode": .int(Int64(device.mode.rawValue)), "signals": .map(signals), "attestationFailed": .bool(false),
        ]
        if let platform = device.platform { fields["platform"] = .string(platform.rawValue) }
        if let address = device.lastAddress { fields["startedFrom"] = .string(address) }
        switch device.hardware {
        case .attested(let facts, _):
            fields["attestation"] = .string(facts.securityLevel == .secureEnclave ? "appAttest" : "androidKeyAttestation")
            fields["securityLevel"] = .string(facts.securityLevel.rawValue)
            if let boot = facts.verifiedBoot { fields["verifiedBoot"] = .bool(boot) }
            if let patch = facts.osPatchLevel { fields["osPatchLevel"] = .int(Int64(patch)) }
        case .failed: fields["attestationFailed"] = .bool(true)
        case .none: break
        }
        fields["appsDetected"] = .list([])
        if let integrity = device.integrity { playIntegrityFields(integrity, into: &fields) }
        return fields
    }

    /// The device's latest Play Integrity verdict, its fields flat on `device` (`device.playIntegrity` is
    /// the level met, absent when none).
    static func playIntegrityFields(_ state: PlayIntegrityState, into fields: inout [String: ExpressionValue]) {
        let facts = state.facts
        let optional: [(String, String?)] = [
            ("playIntegrity", facts.integrity?.rawValue), ("playIntegrityRefusal", facts.refusal?.rawValue),
            ("appRecognition", facts.appRecognition), ("appLicensing", facts.licensing), ("deviceActivity", facts.deviceActivityLevel),
            ("playProtect", facts.playProtect),
        ]
        for (name, value) in optional { if let value { fields[name] = .string(value) } }
        if let version = facts.versionCode { fields["appVersionCode"] = .int(version) }
        fields["playIntegrityAt"] = timestamp(state.at)
        fields["appsDetected"] = .list(facts.appsDetected.map(ExpressionValue.string))
    }

    static func timestamp(_ date: Date) -> ExpressionValue {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let nanos = Int32(((date.timeIntervalSince1970 - seconds) * 1e9).rounded(.down))
        return ExpressionValue.Timestamp(seconds: Int64(seconds), nanos: min(max(nanos, 0), 999_999_999)).map { .timestamp($0) } ?? .null
    }

    static func duration(_ interval: TimeInterval) -> ExpressionValue {
        .duration(ExpressionValue.Duration(nanoseconds: Int64((interval * 1e9).rounded(.towardZero))))
    }
}
