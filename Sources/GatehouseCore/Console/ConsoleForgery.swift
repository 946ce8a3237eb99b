import Crypto
import Foundation

/// What keeps another site from posting the console's forms with the operator's cookie: each form
/// carries a token only pages of this session can know, and a browser's own word on where a post
/// comes from (`Origin`, `Sec-Fetch-Site`) must name this site.
public enum ConsoleForgery {
    public static let fieldName = "csrf"

    /// The session's form token: an HMAC of a fixed label keyed by the cookie, so it needs no storage
    /// and cannot be worked out without the cookie, which scripts cannot read (`HttpOnly`).
    public static func token(forCookie cookie: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("gatehouse console form".utf8), using: SymmetricKey(data: Array(cookie.utf8)))
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Compared in constant time: the comparison's duration says nothing of how much of it matched.
    public static func tokenMatches(_ presented: String?, cookie: String) -> Bool {
        guard let presented else { return false }
        let expected = Array(token(forCookie: cookie).utf8)
        let given = Array(presented.utf8)
        guard given.count == expected.count else { return false }
        return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Whether the browser's headers allow this post: a present `Sec-Fetch-Site` must say
    /// `same-origin`, and a present `Origin` must be this host. Clients that send neither (curl, a
    /// script with the cookie) are not browsers riding an operator's cookie; the form token still
    /// applies to them.
    public static func sameOrigin(origin: String?, fetchSite: String?, host: String?) -> Bool {
        if let fetchSite, fetchSite != "same-origin" { return false }
        guard let origin else { return true }
        guard let host, let components = URLComponents(string: origin), let originHost = components.host else { return false }
        let originAuthority = components.port.map { "\(originHost):\($0)" } ?? originHost
        return originAuthority.lowercased() == host.lowercased()
    }
}
