/// Uniform random strings over an alphabet (rejection-free: the index is drawn uniformly).
enum RandomText {
    static func make<R: RandomNumberGenerator>(length: Int, alphabet: [Character], using generator: inout R) -> String {
        var text = ""
        text.reserveCapacity(length)
        for _ in 0..<length {
            text.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
        }
        return text
    }

    static let base62 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
}
