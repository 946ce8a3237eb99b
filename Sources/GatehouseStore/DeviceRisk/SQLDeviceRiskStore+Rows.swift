import Foundation
import GatehouseCore

/// Reading device-risk rows back into domain values.
extension SQLDeviceRiskStore {
    static func device(appID: AppID, id: DeviceID, in database: any SQLDatabase) async throws(StoreError) -> Device? {
        try await database.query(
            "SELECT * FROM devices WHERE app_id = \(.uuid(appID.rawValue)) AND device_id = \(.text(id.rawValue))"
        ).first.map(device)
    }

    static func device(_ row: SQLRow) throws(StoreError) -> Device {
        guard let id = try? DeviceID(validating: try row.text("device_id")) else { throw .corruptRow("device id") }
        let model = try row.optionalText("model")
        let osVersion = try row.optionalText("os_version")
        let screen = try row.optionalText("screen")
        let idfv = try row.optionalText("idfv")
        let idfa = try row.optionalText("idfa")
        let ssid = try row.optionalText("wifi_ssid")
        let bssid = try row.optionalText("wifi_bssid")
        let anyBasic = model != nil || osVersion != nil || screen != nil
        var facts: HardwareFacts?
        if let text = try row.optionalText("hardware_facts") {
            guard let decoded = try? JSONDecoder().decode(HardwareFacts.self, from: Data(text.utf8)) else {
                throw .corruptRow("device hardware facts")
            }
            facts = decoded
        }
        var device = Device(
            appID: AppID(try row.uuid("app_id")),
            id: id,
            clientDeviceID: try row.text("client_device_id"),
            mode: CollectionMode(rawValue: Int(try row.int("collect_type"))),
            platform: try row.optionalText("platform").flatMap(Platform.init),
            sdkVersion: try row.optionalText("sdk_version"),
            basic: anyBasic ? BasicDeviceData(model: model, osVersion: osVersion, screen: screen) : nil,
            unique: idfv != nil || idfa != nil ? UniqueDeviceData(idfv: idfv, idfa: idfa) : nil,
            extra: ssid != nil || bssid != nil ? ExtraDeviceData(wifiSsid: ssid, wifiBssid: bssid) : nil,
            environment: EnvironmentSignals(rawValue: Int(try row.int("environment"))),
            firstSeen: try row.date("first_seen"),
            lastSeen: try row.date("last_seen"),
            lastAddress: try row.optionalText("last_address"),
            keyEpoch: Int(try row.int("key_epoch"))
        )
        device.hardware = HardwareAttestationState(
            facts: facts,
            attestedAt: try row.optionalDate("hardware_attested_at"),
            failedAt: try row.optionalDate("attestation_failed_at")
        )
        if let text = try row.optionalText("integrity_facts"), let at = try row.optionalDate("integrity_at") {
            guard let decoded = try? JSONDecoder().decode(PlayIntegrityFacts.self, from: Data(text.utf8)) else {
                throw .corruptRow("device Play Integrity facts")
            }
            device.integrity = PlayIntegrityState(facts: decoded, at: at)
        }
        return device
    }

    static func riskRules(appID: AppID, in database: any SQLDatabase) async throws(StoreError) -> [Int: RiskRules] {
        var rules: [Int: RiskRules] = [:]
        for row in try await database.query("SELECT scope, rules FROM risk_rules WHERE app_id = \(.uuid(appID.rawValue))") {
            guard let decoded = try? JSONDecoder().decode(RiskRules.self, from: Data(try row.text("rules").utf8)) else {
                throw .corruptRow("risk rules are not JSON")
            }
            rules[Int(try row.int("scope"))] = decoded
        }
        return rules
    }

    static func listEntries(appID: AppID, in database: any SQLDatabase) async throws(StoreError) -> [RiskListEntry] {
        try await database.query(
            "SELECT * FROM risk_lists WHERE app_id = \(.uuid(appID.rawValue)) ORDER BY created_at, entry_id"
        ).map { row throws(StoreError) in
            guard let kind = RiskListEntry.Kind(rawValue: try row.text("kind")),
                let subject = RiskListEntry.Subject(rawValue: try row.text("subject"))
            else { throw .corruptRow("list entry kind or subject") }
            return RiskListEntry(
                id: try row.uuid("entry_id"),
                appID: AppID(try row.uuid("app_id")),
                kind: kind,
                subject: subject,
                value: try row.text("value"),
                note: try row.optionalText("note"),
                createdAt: try row.date("created_at")
            )
        }
    }

    static func decisionRecord(_ row: SQLRow) throws(StoreError) -> RiskDecisionRecord {
        guard let eventID = try? EventID(validating: Int(try row.int("event_id"))),
            let accountID = try? AccountID(validating: try row.text("account_id")),
            let state = ZTokenState(rawValue: try row.text("token_state")),
            let decision = RiskDecision(rawValue: try row.text("decision")),
            let tags = try? JSONDecoder().decode([TagHit].self, from: Data(try row.text("tags").utf8))
        else { throw .corruptRow("risk decision row") }
        var outcomes: [RuleOutcome] = []
        if let text = try row.optionalText("rule_outcomes") {
            guard let decoded = try? JSONDecoder().decode([RuleOutcome].self, from: Data(text.utf8)) else { throw .corruptRow("rule outcomes") }
            outcomes = decoded
        }
        let deviceID = try row.optionalText("device_id").flatMap { try? DeviceID(validating: $0) }
        var record = RiskDecisionRecord(
            id: try row.uuid("decision_id"),
            appID: AppID(try row.uuid("app_id")),
            eventID: eventID,
            accountID: accountID,
            deviceID: deviceID,
            tokenID: try row.optionalText("token_id"),
            tokenState: state,
            clientAddress: try row.optionalText("client_address"),
            userAgent: try row.optionalText("user_agent"),
            pageURL: try row.optionalText("page_url"),
            verdict: RiskVerdict(decision: decision, score: Int(try row.int("score")), tags: tags, rules: outcomes),
            decidedAt: try row.date("decided_at")
        )
        record.label = try label(row)
        record.policyVersion = Int(try row.optionalInt("policy_version") ?? 0)
        record.shadow = try row.optionalText("shadow_outcome").flatMap(ShadowOutcome.init(text:))
        if case .bytes(let bytes)? = row.values["facts"] { record.facts = DecisionFacts(decoding: bytes) }
        return record
    }

    static func label(_ row: SQLRow) throws(StoreError) -> DecisionLabel? {
        guard let verdict = try row.optionalText("label") else { return nil }
        guard let parsed = DecisionLabel.Verdict(rawValue: verdict), let kind = DecisionLabel.Kind(rawValue: try row.text("label_kind")) else {
            throw .corruptRow("decision label")
        }
        return DecisionLabel(
            verdict: parsed,
            kind: kind,
            note: try row.optionalText("label_note"),
            labelledBy: try row.text("labelled_by"),
            labelledAt: try row.date("labelled_at")
        )
    }
}
