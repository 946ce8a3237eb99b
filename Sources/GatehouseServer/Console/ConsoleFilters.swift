import Foundation
import Hummingbird

/// A listing page's filters (a GET form): the empty fields dropped, as no filter, and what the next
/// page's link carries so that paging keeps them.
struct ConsoleFilters {
    let given: Parameters
    /// Each filter's text for the form ("" when not given: a filter the form names is never looked up
    /// past it, on the page).
    let shown: [String: String]
    let kept: [URLQueryItem]

    init(_ request: Request, names: [String]) {
        given = Parameters(request.uri.queryParameters.filter { !$0.value.isEmpty })
        var shown: [String: String] = [:]
        var kept: [URLQueryItem] = []
        for name in names {
            let value = given.get(name) ?? ""
            shown[name] = value
            if !value.isEmpty { kept.append(URLQueryItem(name: name, value: value)) }
        }
        self.shown = shown
        self.kept = kept
    }

    /// `path` with the filters and the page position, or nil when there is no next page.
    func next(_ path: String, _ positionName: String, _ position: String?) -> String? {
        guard let position else { return nil }
        var next = URLComponents()
        next.queryItems = kept + [URLQueryItem(name: positionName, value: position)]
        return path + (next.string ?? "")
    }
}
