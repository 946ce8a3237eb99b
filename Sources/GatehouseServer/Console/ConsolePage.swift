import Mustache

/// What one console page shows: a struct whose properties its template names (swift-mustache reads
/// them by reflection). An absent value is nil, never an empty text: Mustache treats any text, even an
/// empty one, as true in a `{{#section}}`.
protocol ConsolePage: Sendable {
    /// The template under `ConsoleResources`, without `.mustache`.
    static var template: String { get }
}

/// The operator signed in, as the layout's `{{#me}}` and the pages' `{{#me.admin}}` read it.
struct SignedInOperator: Sendable {
    let name: String
    let role: String
    let admin: Bool
    let csrf: String

    init(_ caller: ConsoleCaller) {
        name = caller.tokenName
        role = caller.role.rawValue
        admin = caller.role == .admin
        csrf = caller.csrf
    }
}

/// A page's model with the operator beside it: `me` is the operator, any other name the model's
/// property of that name.
struct RenderedPage: MustacheParent {
    let model: any ConsolePage
    let me: SignedInOperator?

    func child(named name: String) -> Any? {
        if name == "me" { return me }
        guard let value = Mirror(reflecting: model).children.first(where: { $0.label == name })?.value else { return nil }
        // An optional's value, or none: nil is a false section, as Mustache's own lookup has it.
        let wrapped = Mirror(reflecting: value)
        return wrapped.displayStyle == .optional ? wrapped.children.first?.value : value
    }
}
