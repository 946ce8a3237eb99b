import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// The risk query's answer (`RiskDecisionView` in openapi.yaml), written with `JSONWriter` rather than
/// `JSONEncoder`: every risk query answers one, the forged ones included. Keys in the encoder's sorted
/// order; `JSONWriterTests` compares the bytes with the generated type's encoding.
enum RiskDecisionJSON {
    static func response(_ record: RiskDecisionRecord, appKey: AppKey?, device: Device?, status: HTTPResponse.Status = .ok) -> Response {
        let (head, body) = rendered(record, appKey: appKey, device: device, status: status)
        return Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: body))
    }

    /// The same as a head and a body, for the answers given on the event loop (`EventLoopRiskQueries`).
    static func rendered(
        _ record: RiskDecisionRecord,
        appKey: AppKey?,
        device: Device?,
        status: HTTPResponse.Status = .ok
    ) -> (
        HTTPResponse, ByteBuffer
    ) {
        var writer = JSONWriter()
        write(record, appKey: appKey, device: device, into: &writer)
        return (HTTPResponse(status: status, headerFields: [.contentType: "application/json"]), ByteBuffer(bytes: writer.bytes))
    }

    /// `RiskDecisionPage`: the operators' listing, each decision with its app's key.
    static func page(_ decisions: [(record: RiskDecisionRecord, appKey: AppKey)], next: String?) -> Response {
        var writer = JSONWriter(capacity: 512 * max(1, decisions.count))
        writer.object { json in
            json.key("items")
            json.array(decisions) { json, listed in write(listed.record, appKey: listed.appKey, device: nil, into: &json) }
            if let next {
                json.key("nextCursor")
                json.string(next)
            }
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    static func write(_ record: RiskDecisionRecord, appKey: AppKey?, device: Device?, into writer: inout JSONWriter) {
        writer.object { json in
            json.key("accountId")
            json.string(record.accountID.rawValue)
            if let appKey {
                json.key("appKey")
                json.string(appKey.rawValue)
            }
            if let address = record.clientAddress {
                json.key("clientIp")
                json.string(address)
            }
            json.key("decidedAt")
            json.date(record.decidedAt)
            json.key("decision")
            json.string(record.verdict.decision.rawValue)
            json.key("decisionId")
            json.string(record.id.text)
            if let device {
                json.key("device")
                write(device, into: &json)
            }
            if let deviceID = record.deviceID {
                json.key("deviceId")
                json.string(deviceID.rawValue)
            }
            json.key("eventId")
            json.integer(record.eventID.rawValue)
            if let label = record.label {
                json.key("label")
                write(label, into: &json)
            }
            if let page = record.pageURL {
                json.key("pageUrl")
                json.string(page)
            }
            json.key("policyVersion")
            json.integer(record.policyVersion)
            writeJudgement(record, into: &json)
            json.key("tokenState")
            json.string(record.tokenState.rawValue)
            if let agent = record.userAgent {
                json.key("userAgent")
                json.string(agent)
            }
        }
    }

    /// `rules`, `score`, `shadow` and `tags`, in the encoder's order between `policyVersion` and `tokenState`.
    static func writeJudgement(_ record: RiskDecisionRecord, into json: inout JSONWriter) {
        write(record.verdict.rules, into: &json)
        json.key("score")
        json.integer(record.verdict.score)
        if let shadow = record.shadow {
            json.key("shadow")
            write(shadow, into: &json)
        }
        json.key("tags")
        json.tagHits(record.verdict.tags)
    }

    /// `rules`: what the policy's rules did, when any matched or failed.
    static func write(_ outcomes: [RuleOutcome], into json: inout JSONWriter) {
        guard !outcomes.isEmpty else { return }
        json.key("rules")
        json.array(outcomes) { json, outcome in
            json.object { json in
                json.key("effect")
                json.string(outcome.effect)
                optional(&json, "error", outcome.error)
                json.key("mode")
                json.string(outcome.mode.rawValue)
                json.key("rule")
                json.string(outcome.rule)
            }
        }
    }

    /// `ShadowOutcome`.
    static func write(_ shadow: ShadowOutcome, into writer: inout JSONWriter) {
        writer.object { json in
            json.key("decision")
            json.string(shadow.decision.rawValue)
            json.key("score")
            json.integer(shadow.score)
        }
    }

    /// `DecisionLabel`.
    static func write(_ label: DecisionLabel, into writer: inout JSONWriter) {
        writer.object { json in
            json.key("kind")
            json.string(label.kind.rawValue)
            json.key("label")
            json.string(label.verdict.rawValue)
            json.key("labelledAt")
            json.date(label.labelledAt)
            json.key("labelledBy")
            json.string(label.labelledBy)
            optional(&json, "note", label.note)
        }
    }

    /// `DeviceRecord`.
    static func write(_ device: Device, into writer: inout JSONWriter) {
        writer.object { json in
            if let basic = device.basic {
                json.key("basic")
                json.object { json in
                    optional(&json, "model", basic.model)
                    optional(&json, "osVersion", basic.osVersion)
                    optional(&json, "screen", basic.screen)
                }
            }
            json.key("clientDeviceId")
            json.string(device.clientDeviceID)
            json.key("collectType")
            json.integer(device.mode.rawValue)
            json.key("deviceId")
            json.string(device.id.rawValue)
            if let extra = device.extra {
                json.key("extra")
                json.object { json in
                    optional(&json, "wifiBssid", extra.wifiBssid)
                    optional(&json, "wifiSsid", extra.wifiSsid)
                }
            }
            json.key("firstSeen")
            json.date(device.firstSeen)
            optional(&json, "lastAddress", device.lastAddress)
            json.key("lastSeen")
            json.date(device.lastSeen)
            optional(&json, "platform", device.platform?.rawValue)
            optional(&json, "sdkVersion", device.sdkVersion)
            json.key("signals")
            json.array(device.environment.names) { json, name in json.string(name) }
            if let unique = device.unique {
                json.key("unique")
                json.object { json in
                    optional(&json, "idfa", unique.idfa)
                    optional(&json, "idfv", unique.idfv)
                }
            }
        }
    }

    private static func optional(_ json: inout JSONWriter, _ key: StaticString, _ value: String?) {
        guard let value else { return }
        json.key(key)
        json.string(value)
    }
}
