import Foundation

/// The risk tags a device's Play Integrity verdict gives, each with its sentence. The verdict is Google's
/// word on the device, the app and the account; operators weigh each tag (docs/risk.md).
enum PlayIntegrityTags {
    static func hits(_ facts: PlayIntegrityFacts, at time: Date) -> [(RiskTag, String)] {
        let when = time.ISO8601Format()
        var hits: [(RiskTag, String)] = []
        if facts.refusal == nil, let level = facts.integrity {
            hits.append((.attestationPlayIntegrity, "Google Play Integrity vouched for the device (\(level.rawValue)) at \(when)."))
        }
        if facts.integrity == nil || facts.refusal == .integrityTooLow {
            let met = facts.integrity.map { "only \($0.rawValue)" } ?? "no integrity level"
            hits.append((.deviceIntegrityFailed, "Google Play Integrity's verdict at \(when) met \(met), under what the attester requires."))
        }
        if facts.appRecognition == "UNRECOGNIZED_VERSION" {
            hits.append((.appUnrecognized, "Google Play does not recognise this build of the app (verdict at \(when))."))
        }
        if facts.licensing == "UNLICENSED" {
            hits.append((.appUnlicensed, "The user's copy of the app is not licensed by Google Play (verdict at \(when))."))
        }
        if let activity = facts.deviceActivityLevel, activity == "LEVEL_3" || activity == "LEVEL_4" {
            hits.append((.deviceActivityHigh, "The device asked for integrity tokens at \(activity) in the last hour (verdict at \(when))."))
        }
        if facts.riskyApps {
            let apps = facts.appsDetected.filter { $0.hasPrefix("UNKNOWN_") }.joined(separator: ", ")
            hits.append((.environmentRiskyApps, "Apps that can capture the screen or control the device were running: \(apps)."))
        }
        if let protect = facts.playProtect, ["POSSIBLE_RISK", "MEDIUM_RISK", "HIGH_RISK"].contains(protect) {
            hits.append((.environmentPlayProtectRisk, "Google Play Protect said \(protect) (verdict at \(when))."))
        }
        return hits
    }
}
