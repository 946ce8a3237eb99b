import Foundation

/// `cptCheck(cookie:body:)`: whether a response asks for secondary verification (the slider
/// captcha) before the request is retried. The marker is the `gatehouse_cpt=1` cookie or a
/// `gatehouse_cpt` member with `code` 1 in a JSON body (docs/sdk-protocol.md).
public enum SecondaryVerificationCheck {
    /// The cookie name and JSON field that mark a challenged response.
    public static let markerName = "gatehouse_cpt"

    /// - Parameters:
    ///   - cookie: the response's cookies, `"key1=value1;key2=value2;"` or a `Set-Cookie` value.
    ///   - body: the response body.
    /// - Returns: 0 to pass, 1 when secondary verification is required.
    public static func cptCheck(cookie: String?, body: Data?) -> Int {
        for pair in (cookie ?? "").split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == markerName, parts[1] == "1" { return 1 }
        }
        guard let body, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let marker = object[markerName] as? [String: Any], (marker["code"] as? Int) == 1
        else { return 0 }
        return 1
    }

    /// The captcha page the marker names, relative to Gatehouse's base URL, when the body carries it.
    public static func captchaPage(body: Data?) -> String? {
        guard let body, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let marker = object[markerName] as? [String: Any]
        else { return nil }
        return marker["captchaPage"] as? String
    }
}
