import GatehouseCore

/// A `postgres://` URL with libpq's meaning, several hosts included:
/// `postgres://user:password@h1:5432,h2:5433/database?sslmode=disable&target_session_attrs=read-write`.
/// Foundation's `URLComponents` refuses a host list, so the URL is read here, by RFC 3986's parts.
struct PostgresURL: Equatable {
    struct Host: Equatable {
        let name: String
        let port: Int
    }

    /// libpq's `target_session_attrs`, the values Gatehouse serves: any host that answers, or only one
    /// that accepts writes (`read-write`, and `primary`, which libpq reads as "not in recovery").
    enum SessionAttributes: String {
        case any
        case readWrite = "read-write"
        case primary
    }

    let user: String
    let password: String?
    let hosts: [Host]
    let database: String?
    let sslmode: String
    let sessionAttributes: SessionAttributes

    static let example = "postgres://user:password@host:5432/database"

    init(_ text: String) throws(StoreError) {
        let schemes = ["postgres://", "postgresql://"]
        guard let scheme = schemes.first(where: { text.hasPrefix($0) }) else {
            throw .unavailable("GATEHOUSE_DATABASE_URL must look like \(Self.example)")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        var query = Substring("")
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        // The user information ends at the last `@`: a password may hold an encoded one, never a raw one.
        guard let at = rest.lastIndex(of: "@") else { throw .unavailable("the database URL names no user") }
        let userInformation = rest[..<at]
        let hostList = rest[rest.index(after: at)...]
        let userParts = userInformation.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let user = userParts.first.flatMap({ RequestPath.percentDecoded($0) }), !user.isEmpty else {
            throw .unavailable("the database URL names no user")
        }
        self.user = user
        if userParts.count == 2 {
            guard let password = RequestPath.percentDecoded(userParts[1]) else {
                throw .unavailable("the database URL's password is not valid percent-encoding")
            }
            self.password = password
        } else {
            password = nil
        }
        hosts = try hostList.split(separator: ",", omittingEmptySubsequences: false).map { entry throws(StoreError) in try Self.host(entry) }
        guard let database = RequestPath.percentDecoded(path) else { throw .unavailable("the database URL's database name is not valid") }
        self.database = database.isEmpty ? nil : database
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = RequestPath.percentDecoded(parts[0]), let value = RequestPath.percentDecoded(parts.count == 2 ? parts[1] : "")
            else { throw .unavailable("the database URL's parameters are not valid percent-encoding") }
            parameters[name] = value
        }
        sslmode = parameters["sslmode"] ?? "prefer"
        guard ["disable", "prefer", "require"].contains(sslmode) else {
            throw .unavailable("sslmode '\(sslmode)' is not one of disable, prefer, require")
        }
        let attributes = parameters["target_session_attrs"] ?? "any"
        guard let sessionAttributes = SessionAttributes(rawValue: attributes) else {
            throw .unavailable("target_session_attrs '\(attributes)' is not one of any, read-write, primary")
        }
        self.sessionAttributes = sessionAttributes
    }

    /// `name`, `name:port`, `[v6]` or `[v6]:port`; an empty host is the local default, as in libpq.
    private static func host(_ entry: Substring) throws(StoreError) -> Host {
        var name = entry
        var port = Substring("")
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { throw .unavailable("a database host's IPv6 address has no closing bracket") }
            name = entry[entry.index(after: entry.startIndex)..<close]
            let after = entry[entry.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .unavailable("a database host has text after its address") }
                port = after.dropFirst()
            }
        } else if let colon = entry.lastIndex(of: ":") {
            name = entry[..<colon]
            port = entry[entry.index(after: colon)...]
        }
        guard let decoded = RequestPath.percentDecoded(name) else { throw .unavailable("a database host is not valid") }
        guard port.isEmpty || (Int(port).map { (1...65535).contains($0) } ?? false) else {
            throw .unavailable("a database host's port is not a number from 1 to 65535")
        }
        return Host(name: decoded.isEmpty ? "127.0.0.1" : decoded, port: port.isEmpty ? 5432 : Int(port)!)
    }

    /// The URL as logs may show it: every part but the password.
    var redacted: String {
        let list = hosts.map { $0.name.contains(":") ? "[\($0.name)]:\($0.port)" : "\($0.name):\($0.port)" }.joined(separator: ",")
        let attributes = sessionAttributes == .any ? "" : "&target_session_attrs=\(sessionAttributes.rawValue)"
        return "postgres://\(user)\(password == nil ? "" : ":***")@\(list)/\(database ?? "")?sslmode=\(sslmode)\(attributes)"
    }
}
