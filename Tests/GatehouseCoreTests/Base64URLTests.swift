import Foundation
import GatehouseCore
import Testing

/// Unpadded base64url, which ztokens, device ids, JWTs and nonces use.
@Suite struct Base64URLTests {
    @Test func rfc4648Vectors() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        // The two characters that differ from standard base64.
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
    }

    @Test func refusesWhatIsNotStrictBase64URL() {
        for text in ["Zg==", "Z", "Zm9v\n", "+/8", "Zm 9v", "Zm9vé", "Zh", "Zm9"] { #expect(Base64URL.decode(text) == nil, "\(text)") }
    }

    @Test func roundTripsEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(encoded.utf8.allSatisfy(Base64URL.isAlphabet))
            #expect(
                encoded
                    == Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
            )
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }
}
