import Foundation

/// Where Gatehouse may send a role's `AssumeRole` call with the role's long-term key. An operator
/// (or whoever holds an admin token) could otherwise point a role at an internal service and have
/// Gatehouse call it: by default only `https` to a public name or address; plain `http` and
/// loopback, private, link-local and other internal ranges only when the server is configured
/// for an internal STS (`GATEHOUSE_STS_PRIVATE_ENDPOINTS`, for MinIO, LocalStack or moto).
public enum UpstreamEndpoint {
    static let internalRanges = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16",
        "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4", "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "fc00::/7", "fe80::/10",
        "ff00::/8",
    ].compactMap(CIDR.init)
    static let internalSuffixes = ["localhost", ".localhost", ".local", ".internal", ".localdomain", ".home.arpa"]

    /// Why `url` may not be called, or nil when it may.
    public static func refusal(_ url: String, allowInternal: Bool) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { return "the endpoint is not a URL" }
        if allowInternal { return scheme == "https" || scheme == "http" ? nil : "the endpoint is not http(s)" }
        guard scheme == "https" else { return "the endpoint is not https (set GATEHOUSE_STS_PRIVATE_ENDPOINTS for an internal STS)" }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let address = IPAddress(bare) {
            return isInternal(address) ? "the endpoint is an internal address (set GATEHOUSE_STS_PRIVATE_ENDPOINTS to allow it)" : nil
        }
        if internalSuffixes.contains(where: { bare == $0 || (bare.hasSuffix($0) && $0.hasPrefix(".")) }) || !bare.contains(".") {
            return "the endpoint is an internal name (set GATEHOUSE_STS_PRIVATE_ENDPOINTS to allow it)"
        }
        return nil
    }

    public static func isInternal(_ address: IPAddress) -> Bool {
        internalRanges.contains { $0.contains(address) }
    }
}
