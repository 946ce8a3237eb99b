import Foundation
import GatehouseCore
import Testing

/// The console's decisions without I/O: sessions, form tokens, the overview's windows and charts.
@Suite struct ConsoleCoreTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func token(role: AdminRole = .admin, revokedAt: Date? = nil) -> AdminToken {
        AdminToken(id: UUID(), name: "ops", hash: [], createdAt: now, revokedAt: revokedAt, role: role)
    }

    @Test func aSessionIsAdmittedUntilIdleOldOrRevoked() {
        var generator = SystemRandomNumberGenerator()
        let token = Self.token()
        let opened = ConsoleSession.open(for: token, at: Self.now, using: &generator)
        #expect(opened.cookie.hasPrefix("ghs_") && opened.cookie.count == 47)
        #expect(opened.session.hash == CredentialDigest.of(opened.cookie) && opened.session.hash != Array(opened.cookie.utf8))
        #expect(ConsoleSession.presented(inCookieHeader: "a=b; gatehouse_console=\(opened.cookie); c=d") == opened.cookie)
        for header in ["gatehouse_console=ghs_short", "gatehouse_console=\(opened.cookie)x", "other=\(opened.cookie)", "", "gatehouse_console="] {
            #expect(ConsoleSession.presented(inCookieHeader: header) == nil, "\(header)")
        }
        let session = opened.session
        #expect(ConsoleSession.admit(session, token: token, at: Self.now.addingTimeInterval(60)) == .success(token))
        #expect(ConsoleSession.admit(session, token: token, at: Self.now.addingTimeInterval(ConsoleSession.idleTimeout)) == .failure(.idle))
        var busy = session
        busy.lastSeenAt = Self.now.addingTimeInterval(ConsoleSession.lifetime - 60)
        #expect(ConsoleSession.admit(busy, token: token, at: Self.now.addingTimeInterval(ConsoleSession.lifetime)) == .failure(.expired))
        let revoked = Self.token(revokedAt: Self.now.addingTimeInterval(10))
        let revokedSession = ConsoleSession(hash: session.hash, tokenID: revoked.id, createdAt: Self.now, lastSeenAt: Self.now)
        #expect(ConsoleSession.admit(revokedSession, token: revoked, at: Self.now.addingTimeInterval(11)) == .failure(.tokenRevoked))
        #expect(ConsoleSession.admit(session, token: Self.token(), at: Self.now) == .failure(.none), "another token's session")
        #expect(ConsoleSession.admit(nil, token: token, at: Self.now) == .failure(.none))
        #expect(!session.needsTouch(at: Self.now.addingTimeInterval(59)) && session.needsTouch(at: Self.now.addingTimeInterval(60)))
    }

    @Test func theFormTokenNeedsTheCookieAndTheBrowserMustSaySameOrigin() {
        let token = ConsoleForgery.token(forCookie: "ghs_one")
        #expect(token == ConsoleForgery.token(forCookie: "ghs_one") && token != ConsoleForgery.token(forCookie: "ghs_two"))
        #expect(token.count == 43 && !token.contains("=") && !token.contains("+") && !token.contains("/"))
        #expect(ConsoleForgery.tokenMatches(token, cookie: "ghs_one"))
        for presented in [nil, "", String(token.dropLast()), token + "A", ConsoleForgery.token(forCookie: "ghs_two")] {
            #expect(!ConsoleForgery.tokenMatches(presented, cookie: "ghs_one"), "\(presented ?? "nil")")
        }
        let host = "console.example.com:8443"
        #expect(ConsoleForgery.sameOrigin(origin: "https://console.example.com:8443", fetchSite: "same-origin", host: host))
        #expect(ConsoleForgery.sameOrigin(origin: nil, fetchSite: nil, host: host), "not a browser: the form token alone decides")
        #expect(ConsoleForgery.sameOrigin(origin: "https://CONSOLE.example.com:8443", fetchSite: nil, host: host))
        let refused: [(String?, String?)] = [
            ("https://evil.example", nil), ("https://console.example.com", nil), ("null", nil), ("https://console.example.com:8443", "same-site"),
            ("https://console.example.com:8443", "cross-site"), (nil, "cross-site"), (nil, "none"),
            ("https://console.example.com:8443.evil.example", nil),
        ]
        for (origin, site) in refused {
            #expect(!ConsoleForgery.sameOrigin(origin: origin, fetchSite: site, host: host), "\(origin ?? "-") \(site ?? "-")")
        }
        #expect(!ConsoleForgery.sameOrigin(origin: "https://console.example.com:8443", fetchSite: nil, host: nil))
    }

    @Test func windowsDrawWholeBucketsEndingNow() throws {
        for window in OverviewWindow.allCases {
            #expect((60...96).contains(window.bucketCount), "\(window)")
            let start = window.start(at: Self.now)
            let last = Int((Self.now.timeIntervalSince(start) / window.bucketSeconds).rounded(.down))
            #expect(last == window.bucketCount - 1, "now falls in the last bucket")
            #expect(start.timeIntervalSince1970.truncatingRemainder(dividingBy: window.bucketSeconds) == 0)
        }
        #expect(try OverviewWindow(validating: nil) == .day)
        #expect(throws: DomainError.self) { try OverviewWindow(validating: "1y") }
        let key = ActivityKey(appID: AppID(UUID()), at: Date(timeIntervalSince1970: 1_795_000_059.9), metric: .decision, label: "pass")
        #expect(key.minute == Date(timeIntervalSince1970: 1_795_000_020))
    }

    @Test func stackedBarsReadAsARatePerMinute() {
        let buckets: [[String: Int]] = [["pass": 30, "reject": 10], [:], ["review": 5]]
        let chart = ConsoleChart.stacked(buckets, series: ["pass", "review", "reject"], bucketMinutes: 5, width: 300, height: 100) { "b\($0)" }
        #expect(chart.peakPerMinute == 8)
        #expect(chart.bars.count == 3)
        let pass = chart.bars[0]
        let reject = chart.bars[1]
        let review = chart.bars[2]
        #expect(pass.series == "pass" && pass.height == 75 && pass.y == 25 && pass.x == 10 && pass.width == 80)
        #expect(reject.series == "reject" && reject.height == 25 && reject.y == 0, "stacked on top of pass")
        #expect(review.x == 210 && review.height == 12.5 && review.title == "b2: 5 review")
        #expect(ConsoleChart.stacked([[:], [:]], series: ["pass"], bucketMinutes: 1, width: 10, height: 10) { _ in "" }.bars.isEmpty)
        let ranked = ConsoleChart.ranked([("a", 10), ("b", 5), ("c", 0)], width: 200)
        #expect(ranked.map(\.width) == [200, 100, 1])
    }
}
