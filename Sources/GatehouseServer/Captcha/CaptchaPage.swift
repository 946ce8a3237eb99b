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
    static func policy(embedOrigins: [String]) -> String {
        "default-src 'none'; script-src 'self'; connect-src 'self'; img-src data:; "
            + "style-src 'sha256-\(Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString())'; base-uri 'none'; form-action 'none'; "
            + "frame-ancestors " + (["'self'"] + embedOrigins).joined(separator: " ")
    }

    /// The page, naming the origins the script may hand its result to. They come from configuration,
    /// never from the request, and are checked to be bare origins, so they cannot inject markup.
    static func html(embedOrigins: [String]) -> String {
        pageTemplate.replacingOccurrences(of: "EMBED_ORIGINS", with: embedOrigins.joined(separator: " "))
    }

    private static let pageTemplate = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1, user-scalable=no">
        <meta name="gatehouse-embed-origins" content="EMBED_ORIGINS">
        <title>Gatehouse captcha</title>
        <style>\(style)</style>
        </head>
        <body>
        <div id="gh-root" class="gh-root embed">
          <div class="gh-card" id="gh-card" role="dialog" aria-labelledby="gh-title">
            <div class="gh-head">
              <span class="gh-title" id="gh-title"></span>
              <button type="button" id="gh-refresh" aria-label="refresh">&#x21bb;</button>
              <button type="button" id="gh-close" aria-label="close">&#x2715;</button>
            </div>
            <div class="gh-stage" id="gh-stage">
              <img class="gh-bg" id="gh-bg" alt="">
              <img class="gh-piece" id="gh-piece" alt="">
              <div class="gh-status" id="gh-status" role="status" aria-live="polite"></div>
            </div>
            <div class="gh-track" id="gh-track">
              <div class="gh-fill" id="gh-fill"></div>
              <span class="gh-hint" id="gh-hint"></span>
              <div class="gh-handle" id="gh-handle" role="slider" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0" tabindex="0">&#x2192;</div>
            </div>
          </div>
        </div>
        <script src="captcha/slider.js"></script>
        </body>
        </html>

        """

    static let style = """
        html,body{margin:0;padding:0;background:transparent;font:14px/1.3 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"PingFang SC","Microsoft YaHei",sans-serif;color:#1f2933;-webkit-user-select:none;user-select:none;-webkit-tap-highlight-color:transparent}
        .gh-root.embed{width:100%;max-width:360px}
        .gh-root.popup{position:fixed;top:0;left:0;right:0;bottom:0;display:flex;align-items:center;justify-content:center;background:rgba(15,23,42,.45)}
        .gh-card{box-sizing:border-box;width:100%;max-width:360px;background:#fff;border-radius:8px;padding:8px;border:1px solid #e4e7eb}
        .popup .gh-card{width:calc(100vw - 16px);max-width:360px;border:0;box-shadow:0 6px 24px rgba(0,0,0,.25)}
        .gh-head{display:flex;align-items:center;height:22px;margin-bottom:6px}
        .gh-title{flex:1;font-size:13px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
        .gh-head button{border:0;background:none;font-size:15px;line-height:22px;width:26px;height:22px;cursor:pointer;color:#52606d;padding:0}
        .gh-head button.gh-hidden{display:none}
        .gh-stage{position:relative;width:100%;aspect-ratio:2/1;border-radius:4px;overflow:hidden;background:#e4e7eb}
        .gh-stage img{position:absolute;top:0;left:0;height:100%;display:block;pointer-events:none}
        .gh-bg{width:100%}
        .gh-piece{filter:drop-shadow(0 0 2px rgba(0,0,0,.55))}
        .gh-status{position:absolute;left:0;right:0;bottom:0;padding:4px 8px;font-size:12px;color:#fff;background:rgba(15,23,42,.75);transform:translateY(100%);transition:transform .2s}
        .gh-status.gh-show{transform:none}
        .gh-status.gh-ok{background:rgba(22,128,61,.9)}
        .gh-track{position:relative;height:38px;margin-top:6px;border-radius:19px;background:#eef2f6;border:1px solid #d9e2ec;box-sizing:border-box;touch-action:none}
        .gh-fill{position:absolute;left:0;top:0;bottom:0;width:0;border-radius:19px;background:#cfe3ff}
        .gh-hint{position:absolute;top:0;bottom:0;left:40px;right:0;display:flex;align-items:center;justify-content:center;font-size:13px;color:#7b8794;pointer-events:none}
        .gh-handle{position:absolute;left:0;top:-1px;width:40px;height:38px;box-sizing:border-box;border-radius:19px;background:#2563eb;color:#fff;display:flex;align-items:center;justify-content:center;font-size:18px;cursor:grab;touch-action:none;box-shadow:0 1px 3px rgba(0,0,0,.3)}
        .gh-card.gh-done .gh-handle{background:#16a34a}
        .gh-card.gh-shake{animation:gh-shake .3s}
        @keyframes gh-shake{25%{transform:translateX(-4px)}75%{transform:translateX(4px)}}
        """
}
