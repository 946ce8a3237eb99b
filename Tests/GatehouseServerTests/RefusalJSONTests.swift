import Foundation
import GatehouseCore
import HTTPTypes
import NIOCore
import Testing

@testable import GatehouseServer

/// Refusals written by `JSONWriter` against what Foundation's serialiser wrote before: the same
/// members and values, in sorted order, whatever the text holds.
@Suite struct RefusalJSONTests {
    static let texts = ["plain", "", "quote \" backslash \\ slash / é 🙂 \u{2028}", "controls \u{01}\u{1f}\n\r\u{08}\u{0c}\t\u{7f}"]

    /// What `JSONSerialization` writes for `members` with sorted keys, parsed back, and the key order.
    func expected(_ members: [String: Any]) throws -> (NSDictionary, [String]) {
        let data = try JSONSerialization.data(withJSONObject: members, options: [.sortedKeys])
        return (try #require(try JSONSerialization.jsonObject(with: data) as? NSDictionary), members.keys.sorted())
    }

    func written(_ bytes: [UInt8]) throws -> (NSDictionary, [String]) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
        // Keys in the order written: each key is found after the one before it.
        var order: [(String, Int)] = []
        let text = String(decoding: bytes, as: UTF8.self)
        for case let key as String in object.allKeys {
            let range = try #require(text.range(of: "\"\(key)\":"))
            order.append((key, text.distance(from: text.startIndex, to: range.lowerBound)))
        }
        return (object, order.sorted { $0.1 < $1.1 }.map(\.0))
    }

    @Test(arguments: texts, [nil, "req-1"])
    func aProblemIsWhatTheSerialiserWrote(text: String, requestID: String?) throws {
        let field = text.isEmpty ? nil : "f\(text)"
        let problem = Problem(.unauthorized, code: "backend_credentials_invalid", title: "Unauthorized \(text)", detail: text, field: field)
        let (_, body) = problem.rendered(requestID: requestID)
        var members: [String: Any] = [
            "type": "urn:gatehouse:problem:backend_credentials_invalid", "title": "Unauthorized \(text)", "status": 401,
            "code": "backend_credentials_invalid", "detail": text,
        ]
        if let field { members["field"] = field }
        if let requestID { members["requestId"] = requestID }
        let (want, wantOrder) = try expected(members)
        let (got, gotOrder) = try written(Array(body.readableBytesView))
        #expect(got == want)
        #expect(gotOrder == wantOrder)
    }

    @Test(arguments: texts, [nil, "req-1"])
    func sdkCaptchaAndSTSRefusalsAreWhatTheSerialiserWrote(text: String, requestID: String?) throws {
        var members: [String: Any] = ["code": -10, "reason": "r\(text)", "message": text]
        if let requestID { members["requestId"] = requestID }
        let (want, wantOrder) = try expected(members)
        let (got, gotOrder) = try written(JSONWriter.refusal(code: -10, reason: "r\(text)", message: text, requestID: requestID))
        #expect(got == want && gotOrder == wantOrder)
        let (_, sdk) = SDKError(refusal: SDKRefusal(.paramsError, "r\(text)", text)).rendered(requestID: requestID)
        #expect(try written(Array(sdk.readableBytesView)).0 == want)

        var sts: [String: Any] = ["StatusCode": 403, "ErrorCode": "E\(text)", "ErrorMessage": text]
        if let requestID { sts["RequestId"] = requestID }
        let (wantSTS, wantSTSOrder) = try expected(sts)
        let (gotSTS, gotSTSOrder) = try written(STSError(status: .forbidden, errorCode: "E\(text)", message: text).body(requestID: requestID))
        #expect(gotSTS == wantSTS && gotSTSOrder == wantSTSOrder)
    }
}
