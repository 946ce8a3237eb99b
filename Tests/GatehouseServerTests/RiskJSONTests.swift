import Foundation
import GatehouseAPI
import GatehouseCore
import NIOCore
import Testing

@testable import GatehouseServer

/// The risk query's hand-written JSON against the generic path it replaces: the same bytes out as
/// `JSONEncoder` writes for the generated `RiskDecisionView`, and the same values or the same refusal
/// in as `JSONDecoder` gives for the generated `RiskQuery`.
@Suite struct RiskJSONTests {
    static let device = Device(
        appID: AppID(UUID()),
        id: DeviceID(bytes: Array(0..<16)),
        clientDeviceID: "phone \"1\" \\ / é 🙂 \u{2028}",
        mode: CollectionMode(rawValue: 5),
        platform: .ios,
        sdkVersion: "1.2.0",
        basic: BasicDeviceData(model: "iPhone15,2", osVersion: nil, screen: "1179x2556"),
        unique: UniqueDeviceData(idfv: "hmac:00ff", idfa: nil),
        extra: ExtraDeviceData(wifiSsid: "home\tnet", wifiBssid: nil),
        environment: [.jailbreak, .vpn],
        firstSeen: Date(timeIntervalSince1970: 951_782_400.999),  // 2000-02-29
        lastSeen: Date(timeIntervalSince1970: 1_709_164_799.5),  // 2024-02-28T23:59:59
        lastAddress: "2001:db8::1"
    )

    static func labelled(_ state: ZTokenState, at seconds: TimeInterval) -> DecisionLabel? {
        switch state {
        case .fresh:
            DecisionLabel(
                verdict: .fraud,
                kind: .accountTakeover,
                note: "line\none \"é\"",
                labelledBy: "app-server:ab12c",
                labelledAt: Date(timeIntervalSince1970: seconds)
            )
        case .replayed:
            DecisionLabel(
                verdict: .legitimate,
                kind: .other,
                note: nil,
                labelledBy: "admin-token:ops",
                labelledAt: Date(timeIntervalSince1970: seconds)
            )
        default: nil
        }
    }

    static func record(_ state: ZTokenState, device: Bool, at seconds: TimeInterval) throws -> RiskDecisionRecord {
        RiskDecisionRecord(
            id: UUID(),
            appID: Self.device.appID,
            eventID: try EventID(validating: 3348),
            accountID: try AccountID(validating: "acct/é \"x\" \\ 🙂"),
            deviceID: device ? Self.device.id : nil,
            tokenID: device ? "tok" : nil,
            tokenState: state,
            clientAddress: device ? "203.0.113.7" : nil,
            userAgent: device ? "shop/1.0 (\"quoted\")" : nil,
            pageURL: device ? "https://shop.example/cart?x=1&y=/2" : nil,
            verdict: RiskVerdict(
                decision: state == .fresh ? .review : .reject,
                score: state == .fresh ? 40 : 100,
                tags: state == .fresh
                    ? [TagHit(tag: "device.jailbreak", reason: "The SDK said \"jailbroken\" \u{01}\u{1f}\n\r\u{08}\u{0c}\t\u{7f}.", weight: 40)] : [],
                rules: state == .fresh
                    ? [
                        RuleOutcome(rule: "new-device", mode: .enforce, effect: "tag rule.new_device +40", error: nil),
                        RuleOutcome(rule: "absent", mode: .monitor, effect: "decide reject", error: "no such key: 'osPatchLevel' \"é\""),
                    ] : []
            ),
            decidedAt: Date(timeIntervalSince1970: seconds)
        )
    }

    @Test(arguments: [(ZTokenState.fresh, true, 1_800_000_000.123), (.forged, false, 0), (.replayed, true, 253_402_300_799)])
    func theAnswerIsWhatTheEncoderWrites(state: ZTokenState, withDevice: Bool, seconds: TimeInterval) throws {
        var record = try Self.record(state, device: withDevice, at: seconds)
        record.label = Self.labelled(state, at: seconds)
        record.policyVersion = state == .fresh ? 12 : 0
        record.shadow = state == .fresh ? ShadowOutcome(decision: .reject, score: 85) : nil
        let cases: [(AppKey?, Device?)] = [(try AppKey(validating: "ab12c"), withDevice ? Self.device : nil), (nil, nil)]
        for (appKey, device) in cases {
            var writer = JSONWriter()
            RiskDecisionJSON.write(record, appKey: appKey, device: device, into: &writer)
            let encoded = try JSONBody.encoder.encode(Components.Schemas.RiskDecisionView(record, appKey: appKey, device: device))
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
        }
    }

    static let bodies: [String] = [
        #"{"ztoken":"abc","eventId":3301,"accountId":"u","clientIp":"1.2.3.4"}"#,
        #"{"ztoken":"abc","eventId":3301.0,"accountId":"u","clientIp":"::1","userAgent":"a/1"}"#,
        #"{"ztoken":"abc","eventId":3301.5,"accountId":"u","clientIp":"1.2.3.4"}"#,
        #"{"ztoken":"abc","eventId":"3301","accountId":"u","clientIp":"1.2.3.4"}"#,
        #"{"ztoken":"abc","eventId":99999999999999999999,"accountId":"u","clientIp":"1.2.3.4"}"#,
        #"{"ztoken":"abc","eventId":3301,"accountId":"u"}"#,
        #"{"ztoken":"abc","eventId":3301,"accountId":"u","clientIp":"1.2.3.4","extra":1}"#,
        #"{"ztoken":null,"eventId":3301,"accountId":"u","clientIp":"1.2.3.4"}"#,
        #"{"ztoken":"abc","eventId":3301,"accountId":"u","clientIp":"1.2.3.4","userAgent":null}"#,
        #"{"ztoken":1,"eventId":3301,"accountId":"u","clientIp":"1.2.3.4"}"#,
        #"{"ztoken":"abc","eventId":3301,"accountId":["u"],"clientIp":"1.2.3.4"}"#,
        #"{"ztoken":"abc","eventId":3301,"accountId":"u","clientIp":"1.2.3.4","userAgent":true}"#,
        #"["ztoken"]"#, #""text""#, "", "{", #"{"ztoken":"abc",}"#, "nul", #"{"ztoken":"\ud800"}"#,
    ]

    /// Where the strict reader says more than the decoder, on purpose: the field of a number that is
    /// no integer (the decoder names none), and a trailing comma, which RFC 8259 does not allow and the
    /// decoder let through.
    static let sharper: [String: (code: String, field: String?)] = [
        #"{"ztoken":"abc","eventId":3301.5,"accountId":"u","clientIp":"1.2.3.4"}"#: ("invalid_body", "eventId"),
        #"{"ztoken":"abc","eventId":99999999999999999999,"accountId":"u","clientIp":"1.2.3.4"}"#: ("invalid_body", "eventId"),
        #"{"ztoken":"abc",}"#: ("malformed_json", nil),
    ]

    @Test(arguments: bodies)
    func theBodyReadsAsTheDecoderReadsIt(body: String) throws {
        let buffer = ByteBuffer(string: body)
        let generic: Result<RiskQueryBody, Problem> = Result {
            let input = try JSONBody.decode(Components.Schemas.RiskQuery.self, from: buffer, contentType: "application/json")
            return RiskQueryBody(
                ztoken: input.ztoken,
                eventID: input.eventId,
                accountID: input.accountId,
                clientIP: input.clientIp.value1 ?? input.clientIp.value2 ?? "",
                userAgent: input.userAgent
            )
        }.mapError { $0 as? Problem ?? Problem(.internalServerError, code: "not_a_problem", title: "", detail: "\($0)") }
        let strict = Result { () throws(Problem) in try RiskQueryBody.decode(buffer, contentType: "application/json; charset=utf-8") }
        if let sharper = Self.sharper[body] {
            guard case .failure(let generic) = generic, case .failure(let refusal) = strict else {
                Issue.record("\(body): the decoder gave \(generic), the strict reader \(strict)")
                return
            }
            #expect(generic.status == .badRequest && refusal.code == sharper.code && refusal.field == sharper.field, "\(refusal)")
            return
        }
        switch (generic, strict) {
        case (.success(let expected), .success(let read)): #expect(read == expected)
        case (.failure(let expected), .failure(let refusal)):
            #expect(refusal.code == expected.code && refusal.field == expected.field, "\(refusal) against \(expected)")
        default: Issue.record("\(body): the decoder gave \(generic), the strict reader \(strict)")
        }
        #expect(throws: Problem.self) { try RiskQueryBody.decode(buffer, contentType: "text/plain") }
    }
}

extension Components.Schemas.RiskDecisionView {
    /// The generic encoding the hand-written one is held to.
    init(_ record: RiskDecisionRecord, appKey: AppKey?, device: Device?) {
        self.init(
            decisionId: record.id.uuidString.lowercased(),
            appKey: appKey?.rawValue,
            decision: Components.Schemas.Decision(rawValue: record.verdict.decision.rawValue) ?? .reject,
            score: record.verdict.score,
            shadow: record.shadow.map { .init(decision: .init(rawValue: $0.decision.rawValue) ?? .pass, score: $0.score) },
            tokenState: Components.Schemas.TokenState(rawValue: record.tokenState.rawValue) ?? .forged,
            tags: record.verdict.tags.map { .init(tag: $0.tag, reason: $0.reason, weight: $0.weight) },
            eventId: record.eventID.rawValue,
            accountId: record.accountID.rawValue,
            deviceId: record.deviceID?.rawValue,
            device: device.map(Components.Schemas.DeviceRecord.init),
            clientIp: record.clientAddress,
            userAgent: record.userAgent,
            pageUrl: record.pageURL,
            rules: record.verdict.rules.isEmpty
                ? nil
                : record.verdict.rules.map {
                    .init(rule: $0.rule, mode: .init(rawValue: $0.mode.rawValue) ?? .enforce, effect: $0.effect, error: $0.error)
                },
            label: record.label.map {
                .init(
                    label: .init(rawValue: $0.verdict.rawValue) ?? .fraud,
                    kind: .init(rawValue: $0.kind.rawValue) ?? .other,
                    note: $0.note,
                    labelledBy: $0.labelledBy,
                    labelledAt: $0.labelledAt
                )
            },
            policyVersion: record.policyVersion,
            decidedAt: record.decidedAt
        )
    }
}
