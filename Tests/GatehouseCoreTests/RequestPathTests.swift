import Foundation
import GatehouseCore
import Testing

/// The one spelling of a path, and the gate's reading of the paths upstreams disagree on.
@Suite struct RequestPathTests {
    /// The gate's decoder answers as Foundation's `removingPercentEncoding`, which it replaced, on these.
    @Test(arguments: [
        "/v1/%61dmin", "/a%2Fb", "/a%2fb", "%", "%4", "%zz", "/%E2%82%AC", "/%C3", "/%ff%fe", "plain", "", "%%41", "/a%20b%", "/%00",
        "/caf\u{e9}%20x", "%41%42%43",
    ])
    func percentDecodingMatchesFoundation(text: String) {
        #expect(RequestPath.percentDecoded(text) == text.removingPercentEncoding)
    }

    @Test func percentDecodingMatchesFoundationOnRandomInput() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("%%%0123456789abcdefABCDEFgz/. \u{e9}")
        for _ in 0..<2000 {
            let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            // Foundation sometimes turns bytes that are not UTF-8 into U+FFFD; the gate refuses them.
            let foundation = text.removingPercentEncoding
            if let decoded = RequestPath.percentDecoded(text) {
                #expect(decoded == foundation, "\(text)")
            } else {
                #expect(foundation == nil || foundation!.contains("\u{FFFD}"), "\(text)")
            }
        }
    }

    @Test(arguments: ["/", "/v1/admin/apps", "/.well-known/jwks.json", "/captcha/slider.js", "/v1/admin/apps/ab12c/roles/up-loads_1~x"])
    func canonicalPathsPass(path: String) {
        #expect(RequestPath.isCanonical(path))
    }

    @Test(arguments: [
        "", "v1/admin", "//v1/admin/apps", "/v1//admin", "/v1/admin/", "/v1/./admin", "/v1/../admin", "/v1/admin/..", "/v1/...",
        "/v1/%61dmin", "/v1%2Fadmin", "/v1/admin;x", "/v1/admin\\apps", "/v1/ad min", "/v1/admin?x", "/v1/ädmin", "/v1/admin#x",
        "/" + String(repeating: "a", count: 1024),
    ])
    func everyOtherSpellingIsRefused(path: String) {
        #expect(!RequestPath.isCanonical(path))
    }

    @Test func theGateRefusesPathsUpstreamsReadDifferently() {
        #expect(Gate.normalizedPath("/api//pay/./x/../y?z=1") == "/api/pay/y")
        #expect(Gate.normalizedPath("/api/%70ay") == "/api/pay")
        for ambiguous in ["/api;x/pay", "/x/..;/api", "/api\\pay", "/api%2Fpay", "/api%2fpay", "/api/%252e%252e/pay", "/api/%5cpay", "/../api"] {
            #expect(Gate.normalizedPath(ambiguous) == nil, "\(ambiguous)")
        }
    }

    @Test func headIsGatedAsGetAndPrefixesIgnoreCase() throws {
        let route = try ProtectedRoute(method: "GET", pathPrefix: "/api/")
        #expect(route.matches(method: "HEAD", path: "/api/pay"))
        #expect(route.matches(method: "get", path: "/API/pay"))
        #expect(!route.matches(method: "POST", path: "/api/pay"))
        #expect(!route.matches(method: "GET", path: "/apis"))
    }
}
