import Foundation
import Testing

@testable import GatehouseCore

@Suite struct AdminTokenTests {
    @Test func issuedTokensParseBackAndHashStably() throws {
        var generator = SystemRandomNumberGenerator()
        let (plaintext, record) = try AdminToken.issue(name: "alice", at: Date(), using: &generator)
        #expect(plaintext.hasPrefix("gat_") && plaintext.count == 47)
        #expect(AdminToken.presented(inAuthorization: "Bearer \(plaintext)") == .success(plaintext))
        #expect(CredentialDigest.of(plaintext) == record.hash)
        #expect(!record.hash.isEmpty && record.hash != Array(plaintext.utf8))
    }

    @Test func refusalsSayWhy() {
        #expect(AdminToken.presented(inAuthorization: nil) == .failure(.missing))
        #expect(AdminToken.presented(inAuthorization: "Basic abc") == .failure(.malformed))
        #expect(AdminToken.presented(inAuthorization: "Bearer gat_short") == .failure(.malformed))
        #expect(AdminToken.admit(nil, at: Date()) == .failure(.unknown))
        let revoked = AdminToken(id: UUID(), name: "x", hash: [1], createdAt: Date(), revokedAt: Date(timeIntervalSince1970: 0), role: .admin)
        #expect(AdminToken.admit(revoked, at: Date()) == .failure(.revoked))
    }
}

@Suite struct BackendCredentialTests {
    @Test func basicCredentialsSplitAtTheFirstColon() throws {
        let header = "Basic " + Data("abcde:gsk_x:y".utf8).base64EncodedString()
        let presented = try BackendCredentials.presented(inAuthorization: header).get()
        #expect(presented.appKey.rawValue == "abcde")
        #expect(presented.secret == "gsk_x:y")
    }

    @Test func malformedOrForeignCredentialsAreRefused() throws {
        #expect(throws: BackendCredentials.Refusal.missing) { try BackendCredentials.presented(inAuthorization: nil).get() }
        #expect(throws: BackendCredentials.Refusal.malformed) { try BackendCredentials.presented(inAuthorization: "Basic %%%").get() }
        let badKey = "Basic " + Data("NOT-A-KEY:x".utf8).base64EncodedString()
        #expect(throws: BackendCredentials.Refusal.invalid) { try BackendCredentials.presented(inAuthorization: badKey).get() }
        #expect(try BackendCredentials.presented(inAuthorization: "bAsIc   " + Data("abcde:s".utf8).base64EncodedString()).get().secret == "s")
    }

    /// A credential's base64 decodes as Foundation decodes it when it is the one encoding of its bytes
    /// (Foundation's own encoding of what it decoded), and is refused otherwise: other alphabets,
    /// missing, misplaced or extra padding (Foundation reads on past `YQ==YQ==` and takes `====`), stray
    /// characters, unused low bits that are not zero. Over random credentials and their mutations.
    @Test func basicBase64DecodesCanonicalTextAsFoundationDoes() {
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "", "=", "==", "YQ", "YQ=", "YQ==", "YQ===", "Y===", "YWI=", "YWJj", "YW_j", "YW-j", "YW+j", "YW/j", "Y Q==", "YR==", "=YQ=", "====",
            "YQ==YQ==", "YWJjZA==", "YWJjZA=a",
        ]
        for length in 0..<40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Data(bytes).base64EncodedString()
            texts.append(encoded)
            guard !encoded.isEmpty else { continue }
            var mutated = Array(encoded.utf8)
            mutated[Int.random(in: mutated.indices, using: &generator)] = "+/=-_!aZ9 ".utf8.randomElement(using: &generator)!
            texts.append(String(decoding: mutated, as: UTF8.self))
        }
        var accepted = 0
        for text in texts {
            let foundation = Data(base64Encoded: text).flatMap { $0.base64EncodedString() == text ? Array($0) : nil }
            #expect(BackendCredentials.base64(Substring(text).utf8) == foundation, "\(text)")
            if foundation != nil { accepted += 1 }
        }
        #expect(accepted >= 40, "the random credentials themselves decode")
    }
}

@Suite struct ClientAddressTests {
    let proxies = [CIDR("10.0.0.0/8")!, CIDR("fd00::/8")!]

    @Test func untrustedPeersAreTheClientWhateverTheyClaim() {
        #expect(ClientAddress.resolve(peer: "203.0.113.9", forwardedFor: "1.2.3.4", trustedProxies: proxies) == "203.0.113.9")
    }

    @Test func trustedProxiesAreWalkedFromTheRight() {
        #expect(ClientAddress.resolve(peer: "10.1.1.1", forwardedFor: "6.6.6.6, 198.51.100.7, 10.2.2.2", trustedProxies: proxies) == "198.51.100.7")
        #expect(ClientAddress.resolve(peer: "fd00::1", forwardedFor: "2001:db8::5", trustedProxies: proxies) == "2001:db8::5")
    }

    @Test func cidrsMatchOnTheirPrefixOnly() {
        let net = CIDR("192.168.4.0/22")!
        #expect(net.contains(IPAddress("192.168.7.255")!))
        #expect(!net.contains(IPAddress("192.168.8.0")!))
        #expect(!net.contains(IPAddress("::1")!))
        #expect(CIDR("10.0.0.0/33") == nil)
        #expect(CIDR("nonsense") == nil)
    }
}
