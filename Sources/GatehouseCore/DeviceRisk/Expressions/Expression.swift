// The rule language: a subset of CEL (github.com/google/cel-spec), parsed, checked and evaluated here.
// No Swift package implements CEL (none among the local copies), so Core has its own; tests/interop/
// cel_oracle.py runs a corpus through it and through cel-python and requires the same answers.

/// A place in an expression's text, as operators read it: line and column from 1, columns in
/// characters.
public struct SourcePosition: Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    public let column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// A parsed expression: a tree of nodes, each with the position of the token that made it.
public indirect enum RuleExpression: Sendable, Equatable {
    case literal(Literal, SourcePosition)
    case identifier(String, SourcePosition)
    /// `operand.field`; `test` is `has(operand.field)`.
    case select(RuleExpression, field: String, test: Bool, SourcePosition)
    /// `function(arguments)`, or `target.function(arguments)`.
    case call(function: String, target: RuleExpression?, arguments: [RuleExpression], SourcePosition)
    case list([RuleExpression], SourcePosition)
    case map([(key: RuleExpression, value: RuleExpression)], SourcePosition)
    /// `range.all(variable, body)` and the other macros over a list.
    case comprehension(Macro, range: RuleExpression, variable: String, body: RuleExpression, SourcePosition)
    /// A value worked out once when the rule was compiled (`ExpressionFolding`), never by the parser.
    case constant(ExpressionValue, SourcePosition)

    public enum Literal: Sendable, Equatable {
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case string(String)
        case null
    }

    public enum Macro: String, Sendable, CaseIterable {
        case all, exists
        case existsOne = "exists_one"
    }

    public var position: SourcePosition {
        switch self {
        case .literal(_, let p), .identifier(_, let p), .select(_, _, _, let p), .call(_, _, _, let p), .list(_, let p), .map(_, let p),
            .comprehension(_, _, _, _, let p), .constant(_, let p):
            p
        }
    }

    public static func == (left: RuleExpression, right: RuleExpression) -> Bool {
        switch (left, right) {
        case (.literal(let a, _), .literal(let b, _)): a == b
        case (.identifier(let a, _), .identifier(let b, _)): a == b
        case (.select(let a, let f, let t, _), .select(let b, let g, let u, _)): a == b && f == g && t == u
        case (.call(let f, let a, let x, _), .call(let g, let b, let y, _)): f == g && a == b && x == y
        case (.list(let a, _), .list(let b, _)): a == b
        case (.constant(let a, _), .constant(let b, _)): a == b
        case (.map(let a, _), .map(let b, _)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.comprehension(let m, let r, let v, let e, _), .comprehension(let n, let s, let w, let f, _)): m == n && r == s && v == w && e == f
        default: false
        }
    }
}

/// Why an expression is refused, where, and what was expected there: a rule that is saved with one
/// is a 400 naming `line:column`.
public struct ExpressionRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Not CEL, or CEL this subset does not take.
        case syntax
        /// Operands of types no overload takes.
        case type
        case unknownVariable = "unknown_variable"
        case unknownFunction = "unknown_function"
        /// Longer, deeper or bigger than a rule may be.
        case limit
    }

    public let kind: Kind
    public let position: SourcePosition
    public let message: String

    public init(_ kind: Kind, at position: SourcePosition, _ message: String) {
        self.kind = kind
        self.position = position
        self.message = message
    }

    public var description: String { "\(position): \(message)" }
}

/// How large a rule's expression may be: what bounds the work of parsing and checking it, and, with
/// `ExpressionLimits.evaluationCost`, of evaluating it.
public enum ExpressionLimits {
    public static let characters = 2_000
    /// Nesting of the expression's tree (a chain of `&&` or `||` counts once).
    public static let depth = 32
    /// Steps one evaluation may take: each node visited, and each element or character an operation
    /// walks. Past it, the evaluation ends in an error, never a long run.
    public static let evaluationCost = 20_000
    /// The longest text or list an evaluation may build.
    public static let valueSize = 10_000
}
