import Foundation

/// What the gate answers for one request.
public enum GateVerdict: Equatable, Sendable {
    /// No active attester gates this route.
    case open
    /// A valid token for the gating attester.
    case pass(attester: AttestID, claims: AttestationClaims)
    /// The client must attest with this attester, and why.
    case challenge(attester: AttestID, reason: AttestationTokenFailure)
    /// The token is good but the attester also requires a request signature, and it failed.
    case refuse(attester: AttestID, reason: SignatureFailure)
}

public enum Gate {
    /// The active attester gating `method path`: the one with the longest matching path prefix
    /// (ties go to the earliest attestId). A disabled attester gates nothing.
    public static func attester(for method: String, path: String, among attesters: [Attester]) -> Attester? {
        var best: (attester: Attester, length: Int)?
        for attester in attesters.sorted(by: { $0.attestID.rawValue < $1.attestID.rawValue }) where attester.status == .active {
            for route in attester.routes where route.matches(method: method, path: path) {
                if best == nil || route.pathPrefix.utf8.count > best!.length { best = (attester, route.pathPrefix.utf8.count) }
            }
        }
        return best?.attester
    }

    /// The path an origin server will act on, for prefix matching: query dropped, percent-escapes
    /// decoded, `//` merged, `.` and `..` resolved, as nginx's `$uri` is. Nil when it cannot be
    /// read (bad escapes, control characters, climbing above the root) or when upstreams read it
    /// differently: a `;` (path parameters, `..;`), a backslash, an escaped slash or backslash, or an
    /// escape left after decoding once (double encoding). The gate refuses every such path.
    public static func normalizedPath(_ uri: String) -> String? {
        let rawPath = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard rawPath.hasPrefix("/"), rawPath.utf8.count <= 8192, let decoded = RequestPath.percentDecoded(rawPath),
            !decoded.hasControlCharacters, !decoded.contains(where: { $0 == ";" || $0 == "\\" || $0 == "%" }),
            !rawPath.lowercased().contains("%2f")
        else { return nil }
        var segments: [Substring] = []
        for segment in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..":
                guard !segments.isEmpty else { return nil }
                segments.removeLast()
            default: segments.append(segment)
            }
        }
        let trailingSlash = decoded.hasSuffix("/") && !segments.isEmpty
        return "/" + segments.joined(separator: "/") + (trailingSlash ? "/" : "")
    }
}
