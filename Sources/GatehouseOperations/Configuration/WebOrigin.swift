import Foundation

/// A web origin as browsers compare them: `https://host` or `http://host:port`, nothing after it.
enum WebOrigin {
    static func isOrigin(_ text: String) -> Bool {
        guard text.utf8.count <= 255, let components = URLComponents(string: text), let scheme = components.scheme,
            scheme == "https" || scheme == "http", let host = components.host, !host.isEmpty,
            components.path.isEmpty, components.query == nil, components.fragment == nil, components.user == nil,
            components.password == nil
        else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && !CharacterSet.whitespacesAndNewlines.contains($0) && $0 != "\"" && $0 != "<" }
    }
}
