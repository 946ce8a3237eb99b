import Foundation

/// The session policy a role sends upstream, read back so that Gatehouse itself refuses what the
/// policy does not allow before it signs a string or a URL. Both AWS IAM and Alibaba RAM policies
/// have this shape: `{"Version", "Statement": [{"Effect", "Action", "Resource", "Condition"?}]}`.
///
/// Gatehouse's reading is deliberately narrower than the provider's: an Allow with a Condition
/// grants nothing here (Gatehouse cannot evaluate conditions), a Deny with a Condition always
/// denies, and only the service and the `bucket/key` part of a resource are compared (region and
/// account are the provider's to check).
public struct StoragePolicy: Equatable, Sendable {
    public struct Statement: Equatable, Sendable {
        public let allow: Bool
        public let actions: [String]
        public let resources: [String]
        public let conditional: Bool
    }

    public let statements: [Statement]
    public static let longest = 2048

    /// The placeholders a template may use.
    public static let placeholders = ["${accountId}", "${deviceId}"]

    /// Checks a template when an operator saves it: JSON of the shape above, within the providers'
    /// size limit, only the two placeholders.
    public static func validateTemplate(_ template: String) throws(DomainError) {
        guard !template.isEmpty, template.utf8.count <= longest else {
            throw DomainError(.invalidPolicyTemplate, "policyTemplate is 1 to \(longest) bytes.", field: "policyTemplate")
        }
        var rest = template
        for placeholder in placeholders { rest = rest.replacingOccurrences(of: placeholder, with: "x") }
        if rest.contains("${") {
            throw DomainError(.invalidPolicyTemplate, "The only placeholders are ${accountId} and ${deviceId}.", field: "policyTemplate")
        }
        _ = try parse(rest)
    }

    /// The template with its placeholders filled. Values are restricted (see `isSafeValue`) so that
    /// nobody can widen a policy through an account name such as `*` or `"`.
    public static func render(_ template: String, accountID: String, deviceID: String) throws(DomainError) -> String {
        for value in [accountID, deviceID] where !isSafeValue(value) {
            throw DomainError(
                .invalidRole,
                "Account and device IDs used in a session policy are 1 to 128 of A-Z a-z 0-9 . _ @ -.",
                field: "accountId"
            )
        }
        let rendered = template.replacingOccurrences(of: "${accountId}", with: accountID)
            .replacingOccurrences(of: "${deviceId}", with: deviceID)
        guard rendered.utf8.count <= longest else {
            throw DomainError(.invalidPolicyTemplate, "The session policy for this account is over \(longest) bytes.", field: "policyTemplate")
        }
        return rendered
    }

    public static func isSafeValue(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count)
            && value.utf8.allSatisfy {
                URIEncoding.isUnreserved($0) && $0 != UInt8(ascii: "~") || $0 == UInt8(ascii: "@")
            }
    }

    public static func parse(_ text: String) throws(DomainError) -> StoragePolicy {
        func refuse(_ why: String) -> DomainError { DomainError(.invalidPolicyTemplate, why, field: "policyTemplate") }
        guard let document = JSONValue.parse(Array(text.utf8))?.object else { throw refuse("policyTemplate is a JSON object.") }
        guard Set(document.keys).isSubset(of: ["Version", "Statement"]), case .array(let items)? = document["Statement"], !items.isEmpty
        else { throw refuse("A policy has Version and a non-empty Statement array, nothing else.") }
        var statements: [Statement] = []
        for item in items {
            guard let statement = item.object,
                Set(statement.keys).isSubset(of: ["Sid", "Effect", "Action", "Resource", "Condition"]),
                let effect = statement["Effect"]?.string, effect == "Allow" || effect == "Deny",
                let actions = strings(statement["Action"]), let resources = strings(statement["Resource"])
            else {
                throw refuse(
                    "Each statement has Effect (Allow or Deny), Action and Resource (a string or strings), and optionally Sid and Condition."
                )
            }
            statements.append(Statement(allow: effect == "Allow", actions: actions, resources: resources, conditional: statement["Condition"] != nil))
        }
        return StoragePolicy(statements: statements)
    }

    private static func strings(_ value: JSONValue?) -> [String]? {
        switch value {
        case .string(let text)?: return [text]
        case .array(let items)?:
            let texts = items.compactMap(\.string)
            return texts.count == items.count && !texts.isEmpty ? texts : nil
        default: return nil
        }
    }

    /// Whether `action` (such as `oss:GetObject`) on `bucket/key` (or `bucket` alone) is allowed:
    /// an explicit deny wins, then an unconditional allow, else no.
    public func allows(service: String, action: String, object: String) -> Bool {
        func matches(_ statement: Statement) -> Bool {
            statement.actions.contains { Glob.matches($0.lowercased(), "\(service):\(action)".lowercased()) }
                && statement.resources.contains { Self.resource($0, service: service, object: object) }
        }
        if statements.contains(where: { !$0.allow && matches($0) }) { return false }
        return statements.contains { $0.allow && !$0.conditional && matches($0) }
    }

    /// `arn:<partition>:s3:<region>:<account>:<bucket/key>` or `acs:oss:<region>:<account>:<bucket/key>`,
    /// or `*`.
    static func resource(_ pattern: String, service: String, object: String) -> Bool {
        if pattern == "*" { return true }
        let parts = pattern.split(separator: ":", maxSplits: pattern.hasPrefix("arn:") ? 5 : 4, omittingEmptySubsequences: false)
        let serviceIndex = pattern.hasPrefix("arn:") ? 2 : 1
        guard parts.count == serviceIndex + 4, parts[0] == "arn" || parts[0] == "acs" else { return false }
        return Glob.matches(String(parts[serviceIndex]), service) && Glob.matches(String(parts[serviceIndex + 3]), object)
    }
}

/// IAM-style wildcards: `*` any run of characters, `?` exactly one.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let t = Array(text.unicodeScalars)
        var (pi, ti) = (0, 0)
        var star: Int?
        var mark = 0
        while ti < t.count {
            if pi < p.count && (p[pi] == "?" || p[pi] == t[ti]) {
                pi += 1
                ti += 1
            } else if pi < p.count && p[pi] == "*" {
                star = pi
                mark = ti
                pi += 1
            } else if let star {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
