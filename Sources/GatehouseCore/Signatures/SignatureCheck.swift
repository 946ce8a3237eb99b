import Crypto
import Foundation
import GatehouseSigning

/// Why a request signature fails, in the words `POST /v1/signatures/verify` answers with.
public enum SignatureFailure: String, Error, Sendable, CaseIterable {
    case missingHeader
    case malformed
    case unknownDevice
    case deviceBlocked
    case staleTimestamp
    case replayed
    case hashMismatch
    case badSignature
}

/// Which data the wtoken signs: the body itself (default), or the whash sent in `ali_sign_whash` (custom).
public enum SignatureMode: String, Sendable {
    case `default`
    case custom
}

/// A request as the app's backend received it: method, URL as sent, the body's SHA-256, the two headers.
public struct PresentedRequest: Sendable, Equatable {
    public let method: String
    public let url: String
    public let bodyHash: [UInt8]
    public let wtoken: String?
    public let whash: String?

    public init(method: String, url: String, bodyHash: [UInt8], wtoken: String?, whash: String?) {
        self.method = method
        self.url = url
        self.bodyHash = bodyHash
        self.wtoken = wtoken
        self.whash = whash
    }
}

/// A wtoken taken apart, with what its MAC must cover.
public struct ReadSignature: Sendable, Equatable {
    public let deviceID: DeviceID
    public let timestamp: Int64
    public let nonce: String
    public let mac: [UInt8]
    public let mode: SignatureMode
    /// SHA-256 of the signed data: the body, or the whash's ASCII.
    public let signedDataHash: [UInt8]

    /// Until when its nonce must be remembered: twice the freshness window past its MAC'd timestamp,
    /// so that a replay finds the same (nonce, expiry) key.
    public var nonceKeptUntil: Date {
        Date(timeIntervalSince1970: TimeInterval(timestamp) + TimeInterval(2 * SignatureCheck.window))
    }
}

/// The checks that need no database: presence, shape, the whash against the URL or body, the clock
/// window. The device's key and the nonce come after, from the store.
public enum SignatureCheck {
    /// A signature is good within 5 minutes either side of the server's clock.
    public static let window: Int64 = 300
    static let longestHeader = 512

    /// - Parameter bodyKnown: false at a proxy's gate, which never sees the body: a body method must then
    ///   use custom signing (the MAC covers the whash), and comparing the whash with the body is left
    ///   to the upstream.
    public static func read(_ request: PresentedRequest, bodyKnown: Bool = true) -> Result<ReadSignature, SignatureFailure> {
        guard let wtoken = request.wtoken, !wtoken.isEmpty else { return .failure(.missingHeader) }
        guard wtoken.utf8.count <= longestHeader else { return .failure(.malformed) }
        let parts = wtoken.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == RequestSigning.version,
            let deviceID = try? DeviceID(validating: parts[1]),
            parts[2].utf8.count <= 12, parts[2].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let timestamp = Int64(parts[2]),
            parts[3].utf8.count == 22, let nonce = Base64URL.decode(parts[3]), nonce.count == 16,
            parts[4].utf8.count == 43, let mac = Base64URL.decode(parts[4]), mac.count == 32
        else { return .failure(.malformed) }
        var mode = SignatureMode.default
        var signedDataHash = request.bodyHash
        let hashesURL = RequestSigning.hashesURL(request.method)
        if !bodyKnown && !hashesURL && request.whash == nil { return .failure(.missingHeader) }
        if let whash = request.whash {
            guard !whash.isEmpty else { return .failure(.missingHeader) }
            guard whash.utf8.count == 43, let bytes = Base64URL.decode(whash), bytes.count == 32 else { return .failure(.malformed) }
            let expected = hashesURL ? RequestSigning.whash(Array(request.url.utf8)) : Base64URL.encode(request.bodyHash)
            guard whash == expected || (!bodyKnown && !hashesURL) else { return .failure(.hashMismatch) }
            mode = .custom
            signedDataHash = Array(SHA256.hash(data: Array(whash.utf8)))
        }
        return .success(
            ReadSignature(deviceID: deviceID, timestamp: timestamp, nonce: parts[3], mac: mac, mode: mode, signedDataHash: signedDataHash)
        )
    }

    public static func isFresh(_ signature: ReadSignature, at now: Date) -> Bool {
        abs(Int64(now.timeIntervalSince1970.rounded(.down)) - signature.timestamp) <= window
    }

    /// Whether the MAC is the device key's over this method and data; constant-time.
    public static func macMatches(_ signature: ReadSignature, method: String, deviceKey: [UInt8]) -> Bool {
        let expected = RequestSigning.mac(
            method: method,
            deviceID: signature.deviceID.rawValue,
            timestamp: signature.timestamp,
            nonce: signature.nonce,
            dataHash: signature.signedDataHash,
            deviceKey: deviceKey
        )
        return expected.count == signature.mac.count && zip(expected, signature.mac).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
