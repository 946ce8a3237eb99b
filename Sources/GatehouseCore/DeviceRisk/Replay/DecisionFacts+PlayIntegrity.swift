import Foundation

/// Format 2's additions: the device's Play Integrity verdict (a byte 0 when it has none) and the farm
/// counts after the velocity counts.
extension DecisionFacts {
    static let integrityLevels: [PlayIntegrityLevel] = [.virtual, .basic, .device, .strong]
    static let refusals = PlayIntegrityRefusal.allCases

    static func encode(_ integrity: PlayIntegrityState?, into out: inout FactsBytes) {
        guard let integrity else { return out.bytes.append(0) }
        let facts = integrity.facts
        out.bytes.append(1)
        out.date(integrity.at)
        out.bytes.append(facts.integrity.flatMap { integrityLevels.firstIndex(of: $0) }.map { UInt8($0 + 1) } ?? 0)
        out.bytes.append(facts.refusal.flatMap { refusals.firstIndex(of: $0) }.map { UInt8($0 + 1) } ?? 0)
        for text in [facts.appRecognition, facts.licensing, facts.deviceActivityLevel, facts.playProtect] { out.string(text) }
        out.signed(facts.versionCode ?? -1)
        out.unsigned(UInt64(facts.appsDetected.count))
        for app in facts.appsDetected { out.string(app) }
    }

    /// `.some(nil)` for a device without a verdict, nil for bytes that are none.
    static func decodeIntegrity(_ input: inout FactsReader) -> PlayIntegrityState?? {
        guard let present = input.byte() else { return nil }
        guard present == 1 else { return present == 0 ? .some(nil) : nil }
        guard let time = input.date(), let level = input.byte(), Int(level) <= integrityLevels.count, let refusal = input.byte(),
            Int(refusal) <= refusals.count, let recognition = input.string(), let recognized = recognition, let licensing = input.string(),
            let activity = input.string(), let protect = input.string(), let version = input.signed(), let count = input.count(),
            count <= PlayIntegrityVerdict.maximumListLength
        else { return nil }
        var apps: [String] = []
        for _ in 0..<count {
            guard let app = input.string(), let text = app else { return nil }
            apps.append(text)
        }
        let facts = PlayIntegrityFacts(
            integrity: level == 0 ? nil : integrityLevels[Int(level) - 1],
            appRecognition: recognized,
            licensing: licensing,
            deviceActivityLevel: activity,
            appsDetected: apps,
            playProtect: protect,
            versionCode: version < 0 ? nil : version,
            refusal: refusal == 0 ? nil : refusals[Int(refusal) - 1]
        )
        return .some(PlayIntegrityState(facts: facts, at: time))
    }

    static func encode(_ counts: AttestationCounts, into out: inout FactsBytes) {
        for count in [counts.addressLastHour, counts.networkLastHour, counts.accountLastDay] { out.unsigned(UInt64(max(0, count))) }
    }

    static func decodeAttestations(_ input: inout FactsReader) -> AttestationCounts? {
        guard let address = input.count(), let network = input.count(), let account = input.count() else { return nil }
        return AttestationCounts(addressLastHour: address, networkLastHour: network, accountLastDay: account)
    }
}
