import GatehouseCore
import Testing

/// The one spelling of a path, and the gate's reading of the paths upstreams disagree on.
@Suite struct RequestPathTests {
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
