/// CEL's tokens (cel-spec's `langdef.md`, "Syntax"): numbers, strings with their escapes, names,
/// operators; `//` comments and white space between them. Bytes (`b"..."`) and unsigned integers
/// (`1u`) are CEL this subset refuses, by name.
struct ExpressionToken: Equatable {
    enum Kind: Equatable {
        case int(Int64)
        /// A decimal integer one past `Int64.max`: only `-9223372036854775808` may use it.
        case intMagnitudeOfMinimum
        case double(Double)
        case string(String)
        case identifier(String)
        /// An operator or punctuation: `&&`, `(`, `in` is an identifier.
        case symbol(String)
        case end
    }

    let kind: Kind
    let position: SourcePosition
}

struct ExpressionLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    static let reserved: Set<String> = [
        "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
        "void", "while",
    ]
    private static let symbols = [
        "&&", "||", "<=", ">=", "==", "!=", "!", "-", "*", "/", "%", "+", "<", ">", "?", ":", ".", ",", "[", "]", "(", ")", "{", "}",
    ]

    mutating func tokens() throws(ExpressionRefusal) -> [ExpressionToken] {
        var tokens: [ExpressionToken] = []
        while true {
            skipSpaceAndComments()
            let position = SourcePosition(line: line, column: column)
            guard let scalar = peek() else {
                tokens.append(ExpressionToken(kind: .end, position: position))
                return tokens
            }
            let kind: ExpressionToken.Kind
            if scalar.properties.isASCIIHexDigit && ("0"..."9").contains(scalar)
                || (scalar == "." && peek(1).map { ("0"..."9").contains($0) } == true)
            {
                kind = try number(at: position)
            } else if scalar == "\"" || scalar == "'" {
                kind = .string(try string(raw: false, at: position))
            } else if isNameStart(scalar) {
                let name = word()
                if name == "r" || name == "R", let quote = peek(), quote == "\"" || quote == "'" {
                    kind = .string(try string(raw: true, at: position))
                } else if name == "b" || name == "B", let quote = peek(), quote == "\"" || quote == "'" {
                    throw ExpressionRefusal(.syntax, at: position, "bytes literals are not in Gatehouse's subset of CEL")
                } else if Self.reserved.contains(name) {
                    throw ExpressionRefusal(.syntax, at: position, "'\(name)' is a reserved word")
                } else {
                    kind = .identifier(name)
                }
            } else if let symbol = Self.symbols.first(where: { matches($0) }) {
                advance(symbol.unicodeScalars.count)
                kind = .symbol(symbol)
            } else {
                throw ExpressionRefusal(.syntax, at: position, "unexpected character '\(scalar.escaped(asASCII: true))'")
            }
            tokens.append(ExpressionToken(kind: kind, position: position))
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? { index + offset < scalars.count ? scalars[index + offset] : nil }

    private func matches(_ text: String) -> Bool {
        for (offset, scalar) in text.unicodeScalars.enumerated() where peek(offset) != scalar { return false }
        return true
    }

    private mutating func advance(_ count: Int = 1) {
        for _ in 0..<count {
            guard let scalar = peek() else { return }
            index += 1
            if scalar == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
    }

    private mutating func skipSpaceAndComments() {
        while let scalar = peek() {
            if [" ", "\t", "\n", "\r", "\u{0C}"].contains(scalar) {
                advance()
            } else if scalar == "/" && peek(1) == "/" {
                while let next = peek(), next != "\n" { advance() }
            } else {
                return
            }
        }
    }

    private func isNameStart(_ scalar: Unicode.Scalar) -> Bool { scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }

    private mutating func word() -> String {
        var name = ""
        while let scalar = peek(), isNameStart(scalar) || ("0"..."9").contains(scalar) {
            name.unicodeScalars.append(scalar)
            advance()
        }
        return name
    }

    private mutating func digits(hex: Bool = false) -> String {
        var text = ""
        while let scalar = peek(), hex ? scalar.properties.isASCIIHexDigit : ("0"..."9").contains(scalar) {
            text.unicodeScalars.append(scalar)
            advance()
        }
        return text
    }

    private mutating func number(at position: SourcePosition) throws(ExpressionRefusal) -> ExpressionToken.Kind {
        if peek() == "0", peek(1) == "x" {
            advance(2)
            let hex = digits(hex: true)
            try refuseSuffix(at: position)
            guard !hex.isEmpty, let value = Int64(hex, radix: 16) else {
                throw ExpressionRefusal(.syntax, at: position, "an integer is between -2^63 and 2^63-1")
            }
            return .int(value)
        }
        var text = digits()
        var isDouble = false
        if peek() == ".", let next = peek(1), ("0"..."9").contains(next) {
            advance()
            text += "." + digits()
            isDouble = true
        }
        if let e = peek(), e == "e" || e == "E" {
            var exponent = "e"
            var offset = 1
            if let sign = peek(1), sign == "+" || sign == "-" {
                exponent.unicodeScalars.append(sign)
                offset = 2
            }
            if let digit = peek(offset), ("0"..."9").contains(digit) {
                advance(offset)
                text += exponent + digits()
                isDouble = true
            }
        }
        try refuseSuffix(at: position)
        if isDouble {
            guard let value = Double(text), value.isFinite else { throw ExpressionRefusal(.syntax, at: position, "a number too large for a double") }
            return .double(value)
        }
        if let value = Int64(text) { return .int(value) }
        if text.drop(while: { $0 == "0" }) == "9223372036854775808" { return .intMagnitudeOfMinimum }
        throw ExpressionRefusal(.syntax, at: position, "an integer is between -2^63 and 2^63-1")
    }

    private mutating func refuseSuffix(at position: SourcePosition) throws(ExpressionRefusal) {
        guard let suffix = peek() else { return }
        if suffix == "u" || suffix == "U" {
            throw ExpressionRefusal(.syntax, at: position, "unsigned integers are not in Gatehouse's subset of CEL")
        }
        if isNameStart(suffix) || ("0"..."9").contains(suffix) || suffix == "." {
            throw ExpressionRefusal(.syntax, at: SourcePosition(line: line, column: column), "an operator or the end of the expression")
        }
    }
}

extension ExpressionLexer {
    /// A quoted string, single or triple quoted, with CEL's escapes unless raw.
    fileprivate mutating func string(raw: Bool, at position: SourcePosition) throws(ExpressionRefusal) -> String {
        guard let quote = peek() else { throw ExpressionRefusal(.syntax, at: position, "a closing quote") }
        let triple = peek(1) == quote && peek(2) == quote
        advance(triple ? 3 : 1)
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw ExpressionRefusal(.syntax, at: position, "a closing quote") }
            if scalar == quote && (!triple || (peek(1) == quote && peek(2) == quote)) {
                advance(triple ? 3 : 1)
                return String(text)
            }
            if !triple && (scalar == "\n" || scalar == "\r") {
                throw ExpressionRefusal(.syntax, at: position, "a closing quote before the end of the line")
            }
            if scalar == "\\" && !raw {
                text.append(try escape())
            } else {
                text.append(scalar)
                advance()
            }
            guard text.count <= ExpressionLimits.characters else { throw ExpressionRefusal(.limit, at: position, "a shorter string") }
        }
    }

    private mutating func escape() throws(ExpressionRefusal) -> Unicode.Scalar {
        let position = SourcePosition(line: line, column: column)
        advance()
        guard let letter = peek() else { throw ExpressionRefusal(.syntax, at: position, "an escape sequence") }
        advance()
        let simple: [Unicode.Scalar: Unicode.Scalar] = [
            "\\": "\\", "?": "?", "\"": "\"", "'": "'", "`": "`", "a": "\u{07}", "b": "\u{08}", "f": "\u{0C}", "n": "\n", "r": "\r",
            "t": "\t", "v": "\u{0B}",
        ]
        if let scalar = simple[letter] { return scalar }
        let (count, radix): (Int, Int)
        switch letter {
        case "x", "X": (count, radix) = (2, 16)
        case "u": (count, radix) = (4, 16)
        case "U": (count, radix) = (8, 16)
        case "0"..."3":
            (count, radix) = (2, 8)
        default: throw ExpressionRefusal(.syntax, at: position, "a known escape sequence")
        }
        var digits = radix == 8 ? String(letter) : ""
        for _ in 0..<count {
            guard let digit = peek(), radix == 16 ? digit.properties.isASCIIHexDigit : ("0"..."7").contains(digit) else {
                throw ExpressionRefusal(.syntax, at: position, "\(count) \(radix == 16 ? "hexadecimal" : "octal") digits")
            }
            digits.unicodeScalars.append(digit)
            advance()
        }
        guard let value = UInt32(digits, radix: radix), let scalar = Unicode.Scalar(value) else {
            throw ExpressionRefusal(.syntax, at: position, "a Unicode scalar value (not a surrogate)")
        }
        return scalar
    }
}
