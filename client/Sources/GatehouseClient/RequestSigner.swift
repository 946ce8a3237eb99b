import Foundation
import GatehouseSigning

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs requests as the app-protection SDK does (`vmpHash`, `vmpSign`), with the device key from
/// device start. docs/sdk-protocol.md has the scheme; the server checks it at `/v1/signatures/verify`.
public struct RequestSigner: Sendable {
    /// Default: the wtoken signs the body. Custom: the wtoken signs the whash of the URL (GET, DELETE)
    /// or body, which travels in `ali_sign_whash`.
    public enum Mode: Sendable {
        case `default`
        case custom
    }

    /// The header carrying the request signature (`wToken`).
    public static let wtokenHeader = RequestSigning.wtokenHeader
    /// The header carrying the body hash (`ali_sign_whash`).
    public static let whashHeader = RequestSigning.whashHeader

    /// The device whose key signs.
    public let deviceID: String
    let deviceKey: [UInt8]

    /// - Parameters:
    ///   - deviceID: `deviceId` from device start.
    ///   - deviceKey: `deviceKey` from the same device start (base64url); a new start rotates it.
    public init?(deviceID: String, deviceKey: String) {
        guard let key = Base64URL.decode(deviceKey), key.count == 32 else { return nil }
        self.deviceID = deviceID
        self.deviceKey = key
    }

    /// `vmpHash`: for GET and DELETE pass the full URL exactly as it will be sent; otherwise the body.
    public func whash(_ input: Data) -> String {
        RequestSigning.whash(input)
    }

    /// `vmpSign`: the wtoken over `data` (the body, or the whash's bytes in custom mode) for `method`.
    public func wtoken(_ data: Data, method: String, at date: Date = Date()) -> String {
        RequestSigning.wtoken(
            method: method,
            data: data,
            deviceID: deviceID,
            deviceKey: deviceKey,
            timestamp: Int64(date.timeIntervalSince1970.rounded(.down)),
            nonce: RequestSigning.nonce()
        )
    }

    /// Adds `wToken` (and, in custom mode, `ali_sign_whash`) to a request that is ready to send: its
    /// URL and body must not change afterwards (the URL is hashed as `url.absoluteString`).
    public func sign(_ request: inout URLRequest, mode: Mode = .custom, at date: Date = Date()) {
        let method = request.httpMethod ?? "GET"
        let body = request.httpBody ?? Data()
        switch mode {
        case .default:
            request.setValue(wtoken(body, method: method, at: date), forHTTPHeaderField: Self.wtokenHeader)
        case .custom:
            let input = RequestSigning.hashesURL(method) ? Data((request.url?.absoluteString ?? "").utf8) : body
            let hash = whash(input)
            request.setValue(hash, forHTTPHeaderField: Self.whashHeader)
            request.setValue(wtoken(Data(hash.utf8), method: method, at: date), forHTTPHeaderField: Self.wtokenHeader)
        }
    }
}
