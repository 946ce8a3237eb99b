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
    /// The attester is in `monitor`: the request goes through whatever the token, with what the gate
    /// would have said of it.
    case monitored(attester: AttestID, verdict: AttestVerdict, claims: AttestationClaims?)

    /// What the gate says of the token, for the counters (whatever the attester's enforcement).
    public var attestVerdict: (attester: AttestID, verdict: AttestVerdict)? {
        switch self {
        case .open: nil
        case .pass(let attester, _): (attester, .valid)
        case .challenge(let attester, let reason): (attester, AttestVerdict(reason))
        case .refuse(let attester, _): (attester, .invalid)
        case .monitored(let attester, let verdict, _): (attester, verdict)
        }
    }
}

/// Whether an attester's gate refuses a request without a valid token (`enforce`), or lets it
/// through and only says why (`monitor`): the way to roll attestation out to an app whose older
/// versions send no token, switching to `enforce` once the share of valid tokens is high enough.
public enum AttesterEnforcement: String, Sendable, CaseIterable {
    case enforce, monitor
}

/// The gate's word on a request's token, in the header `X-Gatehouse-Attest-Verdict` and the counters.
public enum AttestVerdict: String, Sendable, CaseIterable {
    case valid, missing, invalid, expired, replayed
    /// A token signed with a key no longer published (a superseded key, so an old SDK or app version).
    case outdated

    public init(_ failure: AttestationTokenFailure) {
        switch failure {
        case .missing: self = .missing
        case .expired: self = .expired
        case .usedUp: self = .replayed
        case .unknownKey: self = .outdated
        case .malformed, .unsupportedAlgorithm, .badSignature, .wrongApp, .wrongAttester, .bindingMissing, .bindingMismatch, .hardwareRequired:
            self = .invalid
        }
    }
}

public enum Gate {
    /// The active attester gating `method path`: the one with the longest matching path prefix
    /// (ties go to the earliest attestId). A disabled attester gates nothing.
    public static func attester(for method: String, path: String, among attesters: [Attester]) -> Attester? {
        match(method: method, path: path, among: attesters)?.attester
    }

    /// The gating attester and the route of it that matched.
    public static func match(method: String, path: String, among attesters: [Attester]) -> (attester: Attester, route: ProtectedRoute)? {
        var best: (attester: Attester, route: ProtectedRoute)?
        for attester in attesters.sorted(by: { $0.attestID.rawValue < $1.attestID.rawValue }) where attester.status == .active {
            for route in attester.routes where route.matches(method: method, path: path) {
                if best == nil || route.pathPrefix.utf8.count > best!.route.pathPrefix.utf8.count { best = (attester, route) }
            }
        }
        return best
    }

    /// The path an origin server will act on, for prefix matching: query dropped, percent-escapes
    /// decoded, `//` merged, `.` and `..` resolved, as nginx's `$uri` is. Nil when it cannot be
    /// read (bad escapes, control characters, climbing above the root) or when upstreams read it
    /// differently: a `;` (path parameters, `..;`), a backslash, an escaped slash or backslash, an
    /// escape left after decoding once (double encoding), or a character that folds to ASCII under
    /// NFKC (full-width letters). The gate refuses every such path.
    public static func normalizedPath(_ uri: String) -> String? {
        plainPath(uri) ?? decodedPath(uri)
    }

    /// A path of letters, digits, `-`, `_`, `~`, `.` and single slashes, with no `.` or `..` segment:
    /// nearly every gated request's, and its own normal form, so it is read in one pass over its bytes,
    /// without decoding, splitting or folding. Nil for any other path (`decodedPath` reads those).
    static func plainPath(_ uri: String) -> String? {
        var length = 0
        var segmentStart = 1
        var (previous, beforePrevious): (UInt8, UInt8) = (0, 0)
        func endsDotSegment() -> Bool {
            let dot = UInt8(ascii: ".")
            return previous == dot && (length - segmentStart == 1 || (length - segmentStart == 2 && beforePrevious == dot))
        }
        for byte in uri.utf8 {
            if byte == UInt8(ascii: "?") { break }
            guard length < 8192 else { return nil }
            switch byte {
            case UInt8(ascii: "/"):
                guard length == 0 || (previous != UInt8(ascii: "/") && !endsDotSegment()) else { return nil }
                segmentStart = length + 1
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "."):
                guard length > 0 else { return nil }
            default:
                return nil
            }
            (previous, beforePrevious) = (byte, previous)
            length += 1
        }
        guard length > 0, !endsDotSegment() else { return nil }
        return length == uri.utf8.count ? uri : String(uri[..<uri.utf8.index(uri.startIndex, offsetBy: length)])
    }

    /// Any other path, percent-decoded and resolved step by step.
    static func decodedPath(_ uri: String) -> String? {
        let rawPath = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard rawPath.hasPrefix("/"), rawPath.utf8.count <= 8192, let decoded = RequestPath.percentDecoded(rawPath),
            !decoded.hasControlCharacters, !decoded.contains(where: { $0 == ";" || $0 == "\\" || $0 == "%" }),
            !rawPath.lowercased().contains("%2f"), !foldsToASCII(decoded)
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

    /// Whether a character of the path becomes ASCII under NFKC (full-width `Ａ`, `ｆｉ` ligatures,
    /// superscripts): some upstreams fold them, so `/%EF%BC%A1PI/` would reach `/API/` ungated. Such a
    /// path is refused as unreadable. An all-ASCII path (nearly every one) is answered without folding;
    /// otherwise only a character NFKC (or case folding) changes is folded, and each distinct one once,
    /// so a long path of crafted characters costs a property lookup per character.
    static func foldsToASCII(_ path: String) -> Bool {
        guard !path.utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        var folded: Set<Unicode.Scalar> = []
        for scalar in path.unicodeScalars where !scalar.isASCII && scalar.properties.changesWhenNFKCCaseFolded {
            guard folded.insert(scalar).inserted else { continue }
            if String(scalar).precomposedStringWithCompatibilityMapping.unicodeScalars.contains(where: \.isASCII) { return true }
        }
        return false
    }
}
