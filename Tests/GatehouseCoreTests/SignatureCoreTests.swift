import Crypto
import Foundation
import GatehouseSigning
import Testing

@testable import GatehouseCore

/// The wtoken scheme against vectors computed independently (Python's hashlib and hmac, from the
/// bytes docs/sdk-protocol.md gives), and every shape check.
@Suite struct SignatureCoreTests {
    let key = Array(UInt8(0)..<32)
    let device = DeviceID(bytes: Array(0..<16)).rawValue
    let nonce = Base64URL.encode(Array(16..<32))
    let url = "https://api.example.com/%E5%95%86%E5%93%81?q=1"

    @Test func whashAndWtokenMatchIndependentVectors() {
        #expect(RequestSigning.whash(Array("hello world".utf8)) == "uU0nuZNNPgilLlLX2n2r-sSE7-N6U4DukIj3rOLvzek")
        let whash = RequestSigning.whash(Array(url.utf8))
        #expect(whash == "S0ihL2kBh-k4bNH2wSwJddrpkTjoDnHTfJKh3XRDgdk")
        let wtoken = RequestSigning.wtoken(
            method: "get",
            data: Array(whash.utf8),
            deviceID: device,
            deviceKey: key,
            timestamp: 1_800_000_000,
            nonce: nonce
        )
        #expect(wtoken == "w1.AAECAwQFBgcICQoLDA0ODw.1800000000.EBESExQVFhcYGRobHB0eHw.mS_wHdZpiUl_isztdXHYpBzUIS-zWUKiPz5yYEF5-yk")
    }

    func presented(_ wtoken: String?, whash: String? = nil, method: String = "GET", url: String? = nil, body: String = "") -> PresentedRequest {
        PresentedRequest(method: method, url: url ?? self.url, bodyHash: Array(SHA256.hash(data: Array(body.utf8))), wtoken: wtoken, whash: whash)
    }

    @Test func readingSeparatesModesAndChecksTheHash() throws {
        let whash = RequestSigning.whash(Array(url.utf8))
        let wtoken = RequestSigning.wtoken(
            method: "GET",
            data: Array(whash.utf8),
            deviceID: device,
            deviceKey: key,
            timestamp: 1_800_000_000,
            nonce: nonce
        )
        let custom = try presented(wtoken, whash: whash).readOrThrow()
        #expect(custom.mode == .custom && custom.timestamp == 1_800_000_000 && custom.nonce == nonce)
        #expect(SignatureCheck.macMatches(custom, method: "GET", deviceKey: key))
        #expect(!SignatureCheck.macMatches(custom, method: "DELETE", deviceKey: key))
        #expect(!SignatureCheck.macMatches(custom, method: "GET", deviceKey: Array(repeating: 1, count: 32)))
        #expect(presented(wtoken, whash: whash, url: url + "&x").read() == .failure(.hashMismatch))
        // POST hashes the body, so the whash of the URL is a mismatch there.
        #expect(presented(wtoken, whash: whash, method: "POST").read() == .failure(.hashMismatch))
        let body = RequestSigning.wtoken(method: "POST", data: Array("{}".utf8), deviceID: device, deviceKey: key, timestamp: 1, nonce: nonce)
        let plain = try presented(body, method: "POST", body: "{}").readOrThrow()
        #expect(plain.mode == .default && SignatureCheck.macMatches(plain, method: "POST", deviceKey: key))
        #expect(!SignatureCheck.macMatches(try presented(body, method: "POST", body: "{ }").readOrThrow(), method: "POST", deviceKey: key))
    }

    @Test func malformedAndMissingHeaders() {
        let good = RequestSigning.wtoken(method: "GET", data: [], deviceID: device, deviceKey: key, timestamp: 5, nonce: nonce)
        #expect(presented(nil).read() == .failure(.missingHeader))
        #expect(presented("").read() == .failure(.missingHeader))
        #expect(presented(good, whash: "").read() == .failure(.missingHeader))
        for broken in [
            "w1", "w2" + good.dropFirst(2), good + ".x", good.replacingOccurrences(of: ".5.", with: ".-5."),
            good.replacingOccurrences(of: ".5.", with: ".1234567890123."), good.replacingOccurrences(of: nonce, with: "short"),
            String(good.dropLast()), String(good.dropLast()) + "=", String(repeating: "w", count: 600), "w1.\u{0}.5.\(nonce).x",
        ] {
            #expect(presented(broken).read() == .failure(.malformed), "\(broken)")
        }
        #expect(presented(good, whash: "not base64 at all, and far too long for a whash").read() == .failure(.malformed))
    }

    @Test func theClockWindowIsFiveMinutes() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for (offset, fresh) in [(0, true), (300, true), (-300, true), (301, false), (-86_400, false)] {
            let wtoken = RequestSigning.wtoken(
                method: "GET",
                data: [],
                deviceID: device,
                deviceKey: key,
                timestamp: 1_800_000_000 + Int64(offset),
                nonce: nonce
            )
            #expect(SignatureCheck.isFresh(try presented(wtoken).readOrThrow(), at: now) == fresh)
        }
    }

    @Test func secondaryVerificationFollowsItsTable() {
        typealias S = SecondaryVerification
        #expect(S.decide(failure: .deviceBlocked, policy: .challenge, latestDecision: nil, passRedeemed: true) == .block(because: "deviceBlocked"))
        #expect(S.decide(failure: .badSignature, policy: .block, latestDecision: nil, passRedeemed: true) == .block(because: "badSignature"))
        #expect(S.decide(failure: .replayed, policy: .challenge, latestDecision: nil, passRedeemed: false) == .challenge(because: "replayed"))
        #expect(S.decide(failure: .replayed, policy: .challenge, latestDecision: nil, passRedeemed: true) == .allow)
        #expect(S.decide(failure: nil, policy: .block, latestDecision: .review, passRedeemed: false) == .challenge(because: "risk_review"))
        #expect(S.decide(failure: nil, policy: .block, latestDecision: .review, passRedeemed: true) == .allow)
        #expect(S.decide(failure: nil, policy: .challenge, latestDecision: .reject, passRedeemed: true) == .block(because: "risk_reject"))
        #expect(S.decide(failure: nil, policy: .block, latestDecision: .pass, passRedeemed: false) == .allow)
        #expect(
            S.decide(failure: nil, policy: .block, latestDecision: nil, challengeListed: true, passRedeemed: false)
                == .challenge(because: "operator_rule")
        )
        #expect(S.decide(failure: nil, policy: .block, latestDecision: .pass, challengeListed: true, passRedeemed: true) == .allow)
        #expect(
            S.decide(failure: nil, policy: .block, latestDecision: .reject, challengeListed: true, passRedeemed: true)
                == .block(because: "risk_reject")
        )
    }
}

extension PresentedRequest {
    func read() -> Result<ReadSignature, SignatureFailure> { SignatureCheck.read(self) }
    func readOrThrow() throws -> ReadSignature { try SignatureCheck.read(self).get() }
}
