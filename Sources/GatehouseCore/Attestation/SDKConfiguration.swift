import Foundation

/// A host the SDK protects, with the SPKI SHA-256 pins it accepts for it (base64, as Approov's
/// dynamic configuration and OkHttp's CertificatePinner write them).
public struct ProtectedHost: Equatable, Sendable, Codable {
    public let host: String
    public let pins: [String]

    public init(host: String, pins: [String]) throws(DomainError) {
        let label = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
        let lower = host.lowercased()
        guard lower.utf8.count <= 253, lower.wholeMatch(of: try! Regex("(\\*\\.)?(\(label)\\.)*\(label)")) != nil else {
            throw DomainError(.invalidSDKConfig, "host is a DNS name, optionally starting with '*.'.", field: "protectedHosts")
        }
        guard (1...10).contains(pins.count), Set(pins).count == pins.count,
            pins.allSatisfy({ $0.utf8.count == 44 && Data(base64Encoded: $0)?.count == 32 })
        else {
            throw DomainError(.invalidSDKConfig, "pins are 1 to 10 distinct base64 SPKI SHA-256 hashes (44 characters).", field: "protectedHosts")
        }
        self.host = lower
        self.pins = pins
    }
}

/// The dynamic configuration the SDK downloads, signed as a JWS with the service's keys so that a
/// tampered copy is detected. `version` grows with every change to the hosts or the attesters.
public struct SDKConfiguration: Sendable {
    public static let maximumHosts = 50
    public static let type = "gatehouse-config+jwt"

    public struct Document: Codable, Equatable, Sendable {
        public struct AttesterEntry: Codable, Equatable, Sendable {
            public let attestId: String
            public let kind: String
            public let tokenHeader: String
            public let bindHeader: String?
            public let routes: [ProtectedRoute]
        }

        public let aud: String
        public let version: Int64
        public let iat: Int
        public let protectedHosts: [ProtectedHost]
        public let attesters: [AttesterEntry]
    }

    public static func document(appKey: AppKey, version: Int64, hosts: [ProtectedHost], attesters: [Attester], at now: Date) -> Document {
        Document(
            aud: appKey.rawValue,
            version: version,
            iat: Int(now.timeIntervalSince1970),
            protectedHosts: hosts,
            attesters: attesters.filter { $0.status == .active }.sorted { $0.attestID.rawValue < $1.attestID.rawValue }.map {
                .init(
                    attestId: $0.attestID.rawValue,
                    kind: $0.kind.rawValue,
                    tokenHeader: $0.tokenHeader,
                    bindHeader: $0.bindHeader,
                    routes: $0.routes
                )
            }
        )
    }

    public static func sign(_ document: Document, with signer: JWSSigningKey) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return signer.sign(payload: Array((try? encoder.encode(document)) ?? Data()), type: type)
    }

    public static func checkedHosts(_ hosts: [ProtectedHost]) throws(DomainError) -> [ProtectedHost] {
        guard hosts.count <= maximumHosts, Set(hosts.map(\.host)).count == hosts.count else {
            throw DomainError(.invalidSDKConfig, "At most 50 protected hosts, each named once.", field: "protectedHosts")
        }
        return hosts
    }
}
