/// CEL's grammar (cel-spec's `langdef.md`), by recursive descent, without message construction or a
/// leading `.`. Operators become calls named as CEL names them (`_+_`, `!_`, `_[_]`, `@in`); a chain
/// of `&&` or `||` is one call with every operand, so that a long conjunction is not a deep tree.
/// Nesting is bounded while parsing, before it can exhaust the stack.
public enum ExpressionParser {
    public static func parse(_ text: String) throws(ExpressionRefusal) -> RuleExpression {
        guard text.unicodeScalars.count <= ExpressionLimits.characters else {
            throw ExpressionRefusal(.limit, at: SourcePosition(line: 1, column: 1), "at most \(ExpressionLimits.characters) characters")
        }
        var lexer = ExpressionLexer(text)
        var parser = Parser(tokens: try lexer.tokens())
        let expression = try parser.expression()
        try parser.expectEnd()
        try checkDepth(expression, level: 1)
        return expression
    }

    static func checkDepth(_ expression: RuleExpression, level: Int) throws(ExpressionRefusal) {
        guard level <= ExpressionLimits.depth else {
            throw ExpressionRefusal(.limit, at: expression.position, "at most \(ExpressionLimits.depth) levels of nesting")
        }
        for child in expression.children { try checkDepth(child, level: level + 1) }
    }
}

extension RuleExpression {
    var children: [RuleExpression] {
        switch self {
        case .literal, .identifier, .constant: []
        case .select(let operand, _, _, _): [operand]
        case .call(_, let target, let arguments, _): (target.map { [$0] } ?? []) + arguments
        case .list(let elements, _): elements
        case .map(let entries, _): entries.flatMap { [$0.key, $0.value] }
        case .comprehension(_, let range, _, let body, _): [range, body]
        }
    }
}

private struct Parser {
    let tokens: [ExpressionToken]
    var index = 0
    var nesting = 0

    init(tokens: [ExpressionToken]) { self.tokens = tokens }

    var current: ExpressionToken { tokens[index] }

    mutating func take() -> ExpressionToken {
        defer { if index < tokens.count - 1 { index += 1 } }
        return tokens[index]
    }

    func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    mutating func accept(_ symbol: String) -> Bool {
        guard isSymbol(symbol) else { return false }
        index += 1
        return true
    }

    mutating func expect(_ symbol: String) throws(ExpressionRefusal) {
        guard accept(symbol) else { throw refusal("'\(symbol)'") }
    }

    func expectEnd() throws(ExpressionRefusal) {
        guard current.kind == .end else { throw refusal("an operator or the end of the expression") }
    }

    func refusal(_ expected: String) -> ExpressionRefusal {
        let found: String
        switch current.kind {
        case .end: found = "the end"
        case .symbol(let symbol): found = "'\(symbol)'"
        case .identifier(let name): found = "'\(name)'"
        default: found = "a literal"
        }
        return ExpressionRefusal(.syntax, at: current.position, "expected \(expected), found \(found)")
    }

    /// Every rule that can nest passes here, so that a thousand `(` stop at the bound, not the stack's.
    mutating func nested<T>(_ body: (inout Parser) throws(ExpressionRefusal) -> T) throws(ExpressionRefusal) -> T {
        nesting += 1
        defer { nesting -= 1 }
        guard nesting <= ExpressionLimits.depth else {
            throw ExpressionRefusal(.limit, at: current.position, "at most \(ExpressionLimits.depth) levels of nesting")
        }
        return try body(&self)
    }

    mutating func expression() throws(ExpressionRefusal) -> RuleExpression {
        try nested { parser throws(ExpressionRefusal) in
            let condition = try parser.logical("||") { parser throws(ExpressionRefusal) in
                try parser.logical("&&") { parser throws(ExpressionRefusal) in try parser.relation() }
            }
            guard parser.isSymbol("?") else { return condition }
            let position = parser.take().position
            let whenTrue = try parser.logical("||") { parser throws(ExpressionRefusal) in
                try parser.logical("&&") { parser throws(ExpressionRefusal) in try parser.relation() }
            }
            try parser.expect(":")
            let whenFalse = try parser.expression()
            return .call(function: "_?_:_", target: nil, arguments: [condition, whenTrue, whenFalse], position)
        }
    }

    mutating func logical(
        _ symbol: String,
        _ operand: (inout Parser) throws(ExpressionRefusal) -> RuleExpression
    ) throws(ExpressionRefusal) -> RuleExpression {
        let first = try operand(&self)
        guard isSymbol(symbol) else { return first }
        let position = current.position
        var operands = [first]
        while accept(symbol) { operands.append(try operand(&self)) }
        return .call(function: "_\(symbol)_", target: nil, arguments: operands, position)
    }

    mutating func relation() throws(ExpressionRefusal) -> RuleExpression {
        var left = try addition()
        while true {
            let position = current.position
            let function: String
            switch current.kind {
            case .symbol(let s) where ["<", "<=", ">", ">=", "==", "!="].contains(s): function = "_\(s)_"
            case .identifier("in"): function = "@in"
            default: return left
            }
            index += 1
            left = .call(function: function, target: nil, arguments: [left, try addition()], position)
        }
    }

    mutating func addition() throws(ExpressionRefusal) -> RuleExpression {
        var left = try multiplication()
        while isSymbol("+") || isSymbol("-") {
            let token = take()
            guard case .symbol(let s) = token.kind else { break }
            left = .call(function: "_\(s)_", target: nil, arguments: [left, try multiplication()], token.position)
        }
        return left
    }

    mutating func multiplication() throws(ExpressionRefusal) -> RuleExpression {
        var left = try unary()
        while isSymbol("*") || isSymbol("/") || isSymbol("%") {
            let token = take()
            guard case .symbol(let s) = token.kind else { break }
            left = .call(function: "_\(s)_", target: nil, arguments: [left, try unary()], token.position)
        }
        return left
    }

    mutating func unary() throws(ExpressionRefusal) -> RuleExpression {
        let position = current.position
        if accept("!") {
            return try nested { parser throws(ExpressionRefusal) in .call(function: "!_", target: nil, arguments: [try parser.unary()], position) }
        }
        guard accept("-") else { return try member() }
        if case .intMagnitudeOfMinimum = current.kind {
            index += 1
            return try memberSuffix(.literal(.int(Int64.min), position))
        }
        return try nested { parser throws(ExpressionRefusal) in .call(function: "-_", target: nil, arguments: [try parser.unary()], position) }
    }

    mutating func member() throws(ExpressionRefusal) -> RuleExpression {
        try memberSuffix(try primary())
    }

    mutating func memberSuffix(_ start: RuleExpression) throws(ExpressionRefusal) -> RuleExpression {
        var operand = start
        while true {
            let position = current.position
            if accept(".") {
                guard case .identifier(let name) = current.kind, name != "in" else { throw refusal("a field or method name") }
                index += 1
                if accept("(") {
                    let arguments = try list(closing: ")")
                    operand = try Self.macro(name, target: operand, arguments: arguments, position)
                } else {
                    operand = .select(operand, field: name, test: false, position)
                }
            } else if accept("[") {
                let key = try expression()
                try expect("]")
                operand = .call(function: "_[_]", target: nil, arguments: [operand, key], position)
            } else {
                return operand
            }
        }
    }

    static func macro(
        _ name: String,
        target: RuleExpression,
        arguments: [RuleExpression],
        _ position: SourcePosition
    ) throws(ExpressionRefusal) -> RuleExpression {
        if ["map", "filter"].contains(name) {
            throw ExpressionRefusal(
                .unknownFunction,
                at: position,
                "\(name)() is not in Gatehouse's subset of CEL: a rule decides, it does not build lists"
            )
        }
        guard let macro = RuleExpression.Macro(rawValue: name) else { return .call(function: name, target: target, arguments: arguments, position) }
        guard arguments.count == 2, case .identifier(let variable, _) = arguments[0] else {
            throw ExpressionRefusal(.syntax, at: position, "\(name)(variable, condition)")
        }
        return .comprehension(macro, range: target, variable: variable, body: arguments[1], position)
    }

    mutating func primary() throws(ExpressionRefusal) -> RuleExpression {
        let token = current
        if case .end = token.kind { throw refusal("an operand") }
        index += 1
        switch token.kind {
        case .int(let value): return .literal(.int(value), token.position)
        case .intMagnitudeOfMinimum: throw ExpressionRefusal(.syntax, at: token.position, "an integer is between -2^63 and 2^63-1")
        case .double(let value): return .literal(.double(value), token.position)
        case .string(let value): return .literal(.string(value), token.position)
        case .identifier("true"): return .literal(.bool(true), token.position)
        case .identifier("false"): return .literal(.bool(false), token.position)
        case .identifier("null"): return .literal(.null, token.position)
        case .identifier("in"):
            index -= 1
            throw refusal("an operand")
        case .identifier(let name):
            guard accept("(") else { return .identifier(name, token.position) }
            let arguments = try list(closing: ")")
            if name == "has" {
                guard arguments.count == 1, case .select(let operand, let field, false, let position) = arguments[0] else {
                    throw ExpressionRefusal(.syntax, at: token.position, "has() takes one field selection, such as has(device.firstSeen)")
                }
                return .select(operand, field: field, test: true, position)
            }
            return .call(function: name, target: nil, arguments: arguments, token.position)
        case .symbol("("):
            let inner = try expression()
            try expect(")")
            return inner
        case .symbol("["):
            return .list(try list(closing: "]"), token.position)
        case .symbol("{"):
            return .map(try entries(), token.position)
        default:
            index -= 1
            throw refusal("an operand")
        }
    }

    /// Expressions separated by commas up to `closing` (a trailing comma allowed in lists and maps).
    mutating func list(closing: String) throws(ExpressionRefusal) -> [RuleExpression] {
        var items: [RuleExpression] = []
        while !accept(closing) {
            if !items.isEmpty {
                try expect(",")
                if closing == "]" && accept(closing) { break }
            }
            items.append(try expression())
        }
        return items
    }

    mutating func entries() throws(ExpressionRefusal) -> [(key: RuleExpression, value: RuleExpression)] {
        var entries: [(key: RuleExpression, value: RuleExpression)] = []
        while !accept("}") {
            if !entries.isEmpty {
                try expect(",")
                if accept("}") { break }
            }
            let key = try expression()
            try expect(":")
            entries.append((key, try expression()))
        }
        return entries
    }
}
