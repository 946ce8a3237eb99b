// Signatures: request signatures (wtoken, whash) and the secondary-verification signal.
// Serves seed 000 (the WAF app-protection SDK's vmpSign, vmpHash and cptCheck).

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations

extension Components.Schemas.SignatureVerifyResponse {
    init(_ verification: SignatureOperations.Verification, appKey: AppKey) {
        let signature = verification.signature
        var verdict = Components.Schemas.SignatureVerifyResponse.VerdictPayload.allow
        var because: String?
        var marker: Components.Schemas.SecondaryVerificationMarker?
        switch verification.verdict {
        case .allow: break
        case .block(let reason):
            verdict = .block
            because = reason
        case .challenge(let reason):
            verdict = .challenge
            because = reason
            var page = URLComponents()
            page.path = "captcha"
            page.queryItems =
                [.init(name: "appKey", value: appKey.rawValue)] + (signature.map { [.init(name: "deviceId", value: $0.deviceID.rawValue)] } ?? [])
            marker = .init(
                cookie: SecondaryVerification.markerCookie,
                body: .init(gatehouseCpt: .init(code: ._1, captchaPage: page.string ?? "captcha"))
            )
        }
        self.init(
            valid: verification.failure == nil,
            reason: verification.failure.map { .init(rawValue: $0.rawValue)! },
            deviceId: signature?.deviceID.rawValue,
            mode: signature.map { $0.mode == .custom ? .custom : ._default },
            signedAt: signature.map { Date(timeIntervalSince1970: TimeInterval($0.timestamp)) },
            verdict: verdict,
            because: because,
            captchaPassAccepted: verification.passAccepted,
            marker: marker
        )
    }
}
