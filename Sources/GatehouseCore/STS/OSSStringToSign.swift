import Foundation

/// A client's OSS V1 string-to-sign, read back into the request it describes, so that self-signed
/// mode signs only what the caller's policy allows (a signer that signs any string lets the
/// client forge any request the key may make).
public struct OSSStringToSign: Equatable, Sendable {
    public enum When: Equatable, Sendable {
        /// A request signed in a header, at this time (`Date` or `x-oss-date`).
        case date(Date)
        /// A presigned URL valid until this time (`Expires`).
        case expires(Date)
    }

    public let verb: String
    public let when: When
    public let bucket: String?
    /// Empty for a bucket-level request.
    public let key: String
    public let subresources: [(String, String)]
    public let headers: [(String, String)]

    public static func == (lhs: OSSStringToSign, rhs: OSSStringToSign) -> Bool {
        lhs.verb == rhs.verb && lhs.when == rhs.when && lhs.bucket == rhs.bucket && lhs.key == rhs.key
            && lhs.subresources.elementsEqual(rhs.subresources, by: ==) && lhs.headers.elementsEqual(rhs.headers, by: ==)
    }

    static let verbs: Set<String> = ["GET", "HEAD", "PUT", "POST", "DELETE"]
    public static let longest = 8192

    /// Parses `VERB\nMD5\nTYPE\nDATE\n[x-oss-name:value\n]*RESOURCE`, refusing anything ambiguous.
    public static func parse(_ content: String) throws(DomainError) -> OSSStringToSign {
        func refuse(_ why: String) -> DomainError { DomainError(.invalidStringToSign, why, field: "content") }
        guard content.utf8.count <= longest else { throw refuse("content is at most \(longest) bytes.") }
        let lines = content.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 5 else { throw refuse("content is VERB, Content-MD5, Content-Type, Date, headers and resource, one per line.") }
        guard verbs.contains(lines[0]) else { throw refuse("'\(lines[0].prefix(16))' is not an OSS verb.") }
        guard lines.allSatisfy({ !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }) else {
            throw refuse("content has control characters.")
        }
        var headers: [(String, String)] = []
        for line in lines[4..<(lines.count - 1)] {
            guard let colon = line.firstIndex(of: ":"), line.hasPrefix("x-oss-"), line[..<colon] == line[..<colon].lowercased() else {
                throw refuse("Between the date and the resource only x-oss-* headers (lower-case name:value) may appear.")
            }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
        guard headers.map(\.0) == headers.map(\.0).sorted(by: URIEncoding.precedes), Set(headers.map(\.0)).count == headers.count
        else { throw refuse("x-oss-* headers are sorted by name, each once.") }
        let when: When
        if let seconds = Int(lines[3]), lines[3].allSatisfy(\.isASCII) {
            when = .expires(Date(timeIntervalSince1970: TimeInterval(seconds)))
        } else if let date = UTCTime.parseHTTP(lines[3]) {
            when = .date(date)
        } else {
            throw refuse("The date line is an HTTP date (Thu, 17 Nov 2005 18:49:58 GMT) or, for a URL, epoch seconds.")
        }
        if let ossDate = headers.first(where: { $0.0 == "x-oss-date" }), ossDate.1 != lines[3] {
            throw refuse("With x-oss-date the date line carries the same value.")
        }
        let (bucket, key, subresources) = try resource(lines[lines.count - 1], refuse)
        return OSSStringToSign(verb: lines[0], when: when, bucket: bucket, key: key, subresources: subresources, headers: headers)
    }

    private static func resource(
        _ text: String,
        _ refuse: (String) -> DomainError
    ) throws(DomainError) -> (String?, String, [(String, String)]) {
        guard text.hasPrefix("/") else { throw refuse("The resource line starts with / (/bucket/key).") }
        let parts = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var subresources: [(String, String)] = []
        if parts.count == 2 {
            for item in parts[1].split(separator: "&", omittingEmptySubsequences: false) {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(pair[0])
                guard OSSV1Signature.subresources.contains(name) else {
                    throw refuse("'\(name.prefix(40))' is not an OSS sub-resource (an object key with ? cannot be signed here).")
                }
                subresources.append((name, pair.count == 2 ? String(pair[1]) : ""))
            }
            guard subresources.map(\.0) == subresources.map(\.0).sorted(by: URIEncoding.precedes) else {
                throw refuse("Sub-resources are sorted by name.")
            }
        }
        let path = parts[0].dropFirst()
        guard !path.isEmpty else { return (nil, "", subresources) }
        let slash = path.firstIndex(of: "/")
        let bucket = String(slash.map { path[..<$0] } ?? path)
        guard StorageBucket.isValid(bucket) else { throw refuse("'\(bucket.prefix(64))' is not a bucket name.") }
        guard let slash else { throw refuse("A bucket-level resource ends with a slash (/bucket/).") }
        return (bucket, String(path[path.index(after: slash)...]), subresources)
    }
}

/// Bucket names as OSS and S3 both accept them: 3 to 63 of `a-z 0-9 -` (S3 also `.`), starting and
/// ending with a letter or digit.
public enum StorageBucket {
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count), let first = bytes.first, let last = bytes.last else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        return alphanumeric(first) && alphanumeric(last)
            && bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }
}
