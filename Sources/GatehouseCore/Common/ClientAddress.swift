import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as its network-order bytes (4 or 16).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]
    public let description: String

    public init?(_ text: String) {
        let trimmed = String(text.trimmingSpacesAndTabs)
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, trimmed, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, trimmed, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
        description = trimmed
    }
}

/// A network such as `10.0.0.0/8` or `fd00::/8`, used for the trusted proxy ranges.
public struct CIDR: Hashable, Sendable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let address = parts.first.flatMap(IPAddress.init) else { return nil }
        let maxLength = address.bytes.count * 8
        let length = parts.count == 2 ? Int(parts[1]) : maxLength
        guard let length, (0...maxLength).contains(length) else { return nil }
        network = address
        prefixLength = length
    }

    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (a, n) in zip(address.bytes, network.bytes) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            guard a & mask == n & mask else { return false }
            remaining -= bits
        }
        return true
    }

    public var description: String { "\(network)/\(prefixLength)" }
}

/// Which address a request really came from, given the proxies the operator trusts.
public enum ClientAddress {
    /// Walks `X-Forwarded-For` from the right while each hop is a trusted proxy; the first untrusted
    /// hop is the client. A peer that is not a trusted proxy is the client, whatever it claims.
    public static func resolve(peer: String?, forwardedFor: String?, trustedProxies: [CIDR]) -> String? {
        guard let peer, let peerAddress = IPAddress(peer) else { return peer }
        guard isTrusted(peerAddress, trustedProxies), let forwardedFor else { return peerAddress.description }
        var client = peerAddress
        for hop in forwardedFor.split(separator: ",").reversed() {
            guard let address = IPAddress(String(hop)) else { break }
            client = address
            if !isTrusted(address, trustedProxies) { break }
        }
        return client.description
    }

    /// Whether the client reached the proxy over TLS: `X-Forwarded-Proto: https`, believed only from a
    /// trusted proxy (anyone else could claim it).
    public static func forwardedOverTLS(peer: String?, forwardedProto: String?, trustedProxies: [CIDR]) -> Bool {
        guard let peer, let peerAddress = IPAddress(peer), isTrusted(peerAddress, trustedProxies) else { return false }
        return forwardedProto?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() == "https"
    }

    static func isTrusted(_ address: IPAddress, _ ranges: [CIDR]) -> Bool {
        ranges.contains { $0.contains(address) }
    }
}
