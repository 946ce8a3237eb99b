import Crypto
import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The captcha page and its script, served as they are: nothing from the request goes into them, so
/// the page's settings (read by the script from its query string) cannot inject markup. No
/// third-party code: the script talks only to the Gatehouse it was loaded from.
enum CaptchaPage {
    static func response(_ body: String, contentType: String, policy: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: contentType,
                .cacheControl: "public, max-age=300",
                .contentSecurityPolicy: policy,
                HTTPField.Name("X-Content-Type-Options")!: "nosniff",
                HTTPField.Name("Referrer-Policy")!: "no-referrer",
            ],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }

    /// The page for an attester's captcha, relative to the service's base URL, for the SDK to open.
    static func link(appKey: AppKey, attestID: AttestID, deviceID: String) -> String {
        var components = URLComponents()
        components.path = "captcha"
        components.queryItems = [
            .init(name: "appKey", value: appKey.rawValue), .init(name: "attestId", value: attestID.rawValue),
            .init(name: "deviceId", value: deviceID),
        ]
        return components.string ?? "captcha"
    }

    /// Scripts and requests only to this origin, the one inline style block by its hash, images only
    /// from the data URLs the puzzle arrives in. Only this origin and the configured ones may frame
    /// the page (`GATEHOUSE_CAPTCHA_EMBED_ORIGINS`): a site that frames it could otherwise overlay it
    /// and have its visitors solve puzzles for someone else.
    static func policy(embedOrigins: [String], style: String) -> String {
        "default-src 'none'; script-src 'self'; connect-src 'self'; img-src data:; "
            + "style-src 'sha256-\(Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString())'; base-uri 'none'; form-action 'none'; "
            + "frame-ancestors " + (["'self'"] + embedOrigins).joined(separator: " ")
    }
}

/// The captcha's page, style and script, shipped as files beside the binary as the console's are
/// (`Captcha/CaptchaResources` in `gatehouse_GatehouseServer.resources`); a missing file stops the start.
struct CaptchaAssets: Sendable {
    /// The page with its style inlined, still naming `EMBED_ORIGINS` for `html(embedOrigins:)`.
    let page: String
    let style: String
    let script: String

    static func load() throws -> CaptchaAssets {
        guard let folder = Bundle.module.url(forResource: "CaptchaResources", withExtension: nil) else { throw Missing() }
        func read(_ name: String) throws -> String {
            guard let text = try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8) else { throw Missing() }
            return text
        }
        let style = try read("captcha.css")
        return CaptchaAssets(
            page: try read("captcha.html").replacingOccurrences(of: "CAPTCHA_STYLE", with: style),
            style: style,
            script: try read("slider.js")
        )
    }

    /// The page, naming the origins the script may hand its result to. They come from configuration,
    /// never from the request, and are checked to be bare origins, so they cannot inject markup.
    func html(embedOrigins: [String]) -> String {
        page.replacingOccurrences(of: "EMBED_ORIGINS", with: embedOrigins.joined(separator: " "))
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String { "the captcha's page is missing: gatehouse_GatehouseServer.resources must be beside the binary" }
    }
}
