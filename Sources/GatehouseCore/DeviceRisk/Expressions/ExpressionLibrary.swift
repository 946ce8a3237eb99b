/// The functions beyond the operators: cel-spec's string methods and conversions, `lowerAscii` from
/// cel-go's strings extension, times and durations, and Kubernetes' IP and CIDR library.
extension ExpressionFunctions {
    static let strings: [ExpressionOverload] = [
        overload("contains", [.string, .string], .bool, member: true) { v, run throws(EvaluationError) in
            try run.budget.spend(v[0].string.unicodeScalars.count)
            return .bool(v[1].string.isEmpty || v[0].string.unicodeScalars.firstRange(of: v[1].string.unicodeScalars) != nil)
        },
        overload("startsWith", [.string, .string], .bool, member: true) { v, run throws(EvaluationError) in
            try run.budget.spend(v[1].string.unicodeScalars.count)
            return .bool(v[0].string.unicodeScalars.starts(with: v[1].string.unicodeScalars))
        },
        overload("endsWith", [.string, .string], .bool, member: true) { v, run throws(EvaluationError) in
            try run.budget.spend(v[1].string.unicodeScalars.count)
            return .bool(v[0].string.unicodeScalars.reversed().starts(with: v[1].string.unicodeScalars.reversed()))
        },
        overload("lowerAscii", [.string], .string, member: true) { v, run throws(EvaluationError) in
            try run.budget.spend(v[0].string.unicodeScalars.count)
            var lowered = String.UnicodeScalarView()
            for scalar in v[0].string.unicodeScalars {
                lowered.append(("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar)
            }
            return .string(String(lowered))
        },
    ]

    static let conversions: [ExpressionOverload] = [
        overload("int", [.int], .int) { v, _ in v[0] },
        overload("int", [.double], .int) { v, _ throws(EvaluationError) in
            let value = v[0].double
            // Strictly inside the range: 2^63 itself is a double but not an int.
            guard value.isFinite, value > -9_223_372_036_854_775_809.0, value < 9_223_372_036_854_775_808.0 else { throw overflow() }
            return .int(Int64(value.rounded(.towardZero)))
        },
        overload("int", [.string], .int) { v, _ throws(EvaluationError) in
            guard let value = Int64(v[0].string) else { throw EvaluationError("cannot convert '\(v[0].string.prefix(40))' to an int") }
            return .int(value)
        },
        overload("int", [.timestamp], .int) { v, _ in
            guard case .timestamp(let t) = v[0] else { return .int(0) }
            return .int(t.seconds)
        },
        overload("double", [.double], .double) { v, _ in v[0] },
        overload("double", [.int], .double) { v, _ in .double(Double(v[0].int)) },
        overload("string", [.string], .string) { v, _ in v[0] },
        overload("string", [.int], .string) { v, _ in .string(String(v[0].int)) },
    ]

    static let addresses: [ExpressionOverload] = [
        overload("ip", [.string], .ip) { v, run throws(EvaluationError) in .ip(try run.address(v[0].string)) },
        overload("cidr", [.string], .cidr) { v, _ throws(EvaluationError) in .cidr(try network(v[0].string)) },
        overload("family", [.ip], .int, member: true) { v, _ in
            guard case .ip(let ip) = v[0] else { return .int(0) }
            return .int(ip.bytes.count == 4 ? 4 : 6)
        },
        overload("isLoopback", [.ip], .bool, member: true) { v, _ in
            guard case .ip(let ip) = v[0] else { return .bool(false) }
            return .bool(ip.bytes.count == 4 ? ip.bytes[0] == 127 : ip.bytes == Array(repeating: 0, count: 15) + [1])
        },
        overload("containsIP", [.cidr, .ip], .bool, member: true) { v, _ in
            guard case .cidr(let network) = v[0], case .ip(let ip) = v[1] else { return .bool(false) }
            return .bool(network.contains(ip))
        },
        overload("containsIP", [.cidr, .string], .bool, member: true) { v, run throws(EvaluationError) in
            guard case .cidr(let network) = v[0] else { return .bool(false) }
            return .bool(network.contains(try run.address(v[1].string)))
        },
        overload("containsCIDR", [.cidr, .cidr], .bool, member: true) { v, _ in
            guard case .cidr(let outer) = v[0], case .cidr(let inner) = v[1] else { return .bool(false) }
            return .bool(inner.prefixLength >= outer.prefixLength && outer.contains(inner.network))
        },
        overload("prefixLength", [.cidr], .int, member: true) { v, _ in
            guard case .cidr(let network) = v[0] else { return .int(0) }
            return .int(Int64(network.prefixLength))
        },
    ]

    /// An address as Kubernetes' `ip()` takes it: exactly the address, no spaces, no zone.
    static func address(_ text: String) throws(EvaluationError) -> IPAddress {
        guard !text.contains("%"), let address = IPAddress(text), address.description == text else {
            throw EvaluationError("IP address '\(text.prefix(60))' is not valid")
        }
        return address
    }

    /// A network as Kubernetes' `cidr()` takes it: an address and a prefix length, both required.
    static func network(_ text: String) throws(EvaluationError) -> CIDR {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let prefix = Int(parts[1]), String(prefix) == parts[1], let network = CIDR(text),
            (try? address(String(parts[0]))) != nil
        else {
            throw EvaluationError("network address '\(text.prefix(60))' is not valid CIDR notation")
        }
        _ = prefix
        return network
    }
}
