import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseTestSupport
import HTTPTypes
import Testing

@testable import GatehouseStore

#if canImport(Glibc)
import Glibc
#endif

/// A fresh token's risk query answered on the event loop (`EventLoopRiskQueries`), once its group
/// commit is written, over loopback HTTP against the built application on both stores: the router's
/// answer, request id and counts; the connection's later requests answered after it, in order; and a
/// client gone before its answer leaves its token consumed and the connection's handler clean.
@Suite struct EventLoopRiskQueriesTests {
    typealias Flow = DeviceRiskFlowTests
    typealias Answers = EventLoopAnswersTests
    static let route = "/v1/risk/query"
    static let twoSecondsOneSlot: @Sendable (inout GatehouseConfiguration) -> Void = {
        $0.databaseTimeoutSeconds = 2
        $0.maxInFlight = 1
    }

    static func body(_ token: String) -> String {
        #"{"ztoken":"\#(token)","eventId":3301,"accountId":"10538532","clientIp":"127.0.0.1","userAgent":"shop/1.0"}"#
    }

    /// Fresh queries, a new token each, until one is answered on the event loop (the credential's and
    /// the policy's copies live 2 s, which a loaded machine can let pass): every answer, the last the loop's.
    static func freshUntilOnTheLoop(
        _ server: ServerFixture,
        _ app: Flow.AppCredentials,
        device: String
    ) async throws -> [TestResponse] {
        var answers: [TestResponse] = []
        for number in 0..<20 {
            let before = try await Answers.fromMemory(server, route)
            var headers = app.backend
            headers[Answers.requestID] = "fresh-\(number)"
            let answer = try await server.send(.post, route, headers: headers, body: body(try await Flow.ztoken(server, app, device: device)))
            #expect(answer.status == .ok && answer.headers[Answers.requestID] == "fresh-\(number)", "\(answer.json ?? [:])")
            #expect(answer.json?["tokenState"] as? String == "fresh")
            answers.append(answer)
            if try await Answers.fromMemory(server, route) > before { return answers }
        }
        Issue.record("no fresh query was answered on the event loop in 20")
        return answers
    }

    /// A server of `kind`, an app and a started device whose fresh query the event loop has answered.
    static func withAppOnTheLoop(
        _ kind: TestStoreKind,
        configure: @Sendable (inout GatehouseConfiguration) -> Void = { _ in },
        _ body: @Sendable (ServerFixture, Flow.AppCredentials, String) async throws -> Void
    ) async throws {
        try await withServer(kind, configure: configure) { server in
            let app = try await createApp(server)
            let device = try await Flow.startDevice(server, app)
            _ = try await freshUntilOnTheLoop(server, app, device: device)
            try await body(server, app, device)
        }
    }

    /// Some of these servers bound a statement at 2 s, which the audited write that creates the app can
    /// pass on a machine running the whole suite (a 503, the likeliest reading of one CI run's failure
    /// there, whose status went unrecorded). That is not what these tests are about: a 503 is asked
    /// again, up to five times; any other refusal fails the test, with its status and body.
    static func createApp(_ server: ServerFixture) async throws -> Flow.AppCredentials {
        var attempts = 1
        while true {
            do {
                return try await Flow.createApp(server)
            } catch let refused as Flow.AppNotCreated where refused.status == .serviceUnavailable && attempts < 5 {
                attempts += 1
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// An audited change (which empties this instance's copies), then a fresh query through the router,
    /// which reads the credential and the policy anew: in memory for the next 2 s from now, not from
    /// whenever an earlier query last read them.
    static func refreshCopies(_ server: ServerFixture, _ app: Flow.AppCredentials, device: String) async throws {
        let token = try await Flow.ztoken(server, app, device: device)
        let changed = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/settings", body: #"{"retentionDays":30}"#)
        #expect(changed.status == .ok, "\(changed.json ?? [:])")
        #expect(try await Flow.query(server, app, token).tokenState == .fresh)
    }

    /// A POST of `body` as the raw text of one request.
    static func raw(_ app: Flow.AppCredentials, _ body: String, requestID: String) -> String {
        var text = "POST \(route) HTTP/1.1\r\nHost: risk\r\nContent-Length: \(body.utf8.count)\r\nX-Request-Id: \(requestID)\r\n"
        for field in app.backend { text += "\(field.name.rawName): \(field.value)\r\n" }
        return text + "\r\n" + body
    }

    @Test(arguments: TestStoreKind.available)
    func aFreshTokenIsAnsweredOnTheEventLoopAsTheRouterAnswersIt(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let answers = try await Self.freshUntilOnTheLoop(server, app, device: device)
            #expect(answers.count > 1, "the router answers the first: nothing of the app is in memory yet")
            let first = try #require(answers.first?.json)
            let last = try #require(answers.last?.json)
            #expect(Set(first.keys) == Set(last.keys), "\(first.keys) against \(last.keys)")
            for key in ["tokenState", "eventId", "accountId", "appKey", "deviceId"] {
                #expect("\(first[key] ?? "-")" == "\(last[key] ?? "-")", "\(key)")
            }
            #expect(answers.last?.headers[.contentType] == answers.first?.headers[.contentType])
            #expect(answers.last?.headers[.server] == "gatehouse" && answers.last?.headers[.date] != nil)
            // Written with its consumption, as the router's: read back, and its token refused a second time.
            let id = try #require(last["decisionId"] as? String)
            let stored = try await server.send(.get, "/v1/risk/decisions/\(id)", headers: app.backend)
            #expect(stored.status == .ok && stored.json?["tokenState"] as? String == "fresh")
            #expect(
                try await Answers.metric(server, "gatehouse_http_requests_total", [#"route="/v1/risk/query""#, #"status="200""#])
                    == Double(answers.count)
            )
            let token = try await Flow.ztoken(server, app, device: device)
            #expect(try await Flow.query(server, app, token).tokenState == .fresh)
            #expect(try await Flow.query(server, app, token).tokenState == .replayed)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func anAnswerWaitingForItsBatchHoldsTheRequestsBehindIt(kind: TestStoreKind) async throws {
        try await Self.withAppOnTheLoop(kind) { server, app, device in
            // A fresh query, a forged one (answered from memory at once), another fresh one and a
            // probe, in one write: answered in the order asked, whichever waited for a batch. Asked
            // again until all three were the loop's (its copies live 2 s). The refresh goes through the
            // router, so the count is read before it, leaving nothing between the refresh and the write.
            var onTheLoop = false
            for _ in 0..<10 where !onTheLoop {
                let forged = Answers.forgedQuery(app, try await Flow.ztoken(server, app, device: device), requestID: "second").1
                var pipelined = Self.raw(app, Self.body(try await Flow.ztoken(server, app, device: device)), requestID: "first")
                pipelined += Self.raw(app, forged, requestID: "second")
                pipelined += Self.raw(app, Self.body(try await Flow.ztoken(server, app, device: device)), requestID: "third")
                pipelined += "GET /health/live HTTP/1.1\r\nHost: risk\r\nX-Request-Id: fourth\r\n\r\n"
                let before = try await Answers.fromMemory(server, Self.route)
                try await Self.refreshCopies(server, app, device: device)
                let answers = try await Answers.exchange(port: try #require(server.client.port), pipelined, until: "X-Request-Id: fourth")
                let order = ["first", "second", "third", "fourth"].map {
                    answers.range(of: "X-Request-Id: \($0)", options: .caseInsensitive)?.lowerBound
                }
                #expect(order.allSatisfy { $0 != nil } && order.compactMap { $0 } == order.compactMap { $0 }.sorted(), "\(answers)")
                #expect(answers.components(separatedBy: "HTTP/1.1 200").count == 5, "\(answers)")
                #expect(answers.components(separatedBy: #""tokenState":"fresh""#).count == 3 && answers.contains(#""tokenState":"forged""#))
                onTheLoop = try await Answers.fromMemory(server, Self.route) >= before + 3
            }
            #expect(onTheLoop, "no pipelined fresh query was answered on the event loop")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aClientGoneBeforeItsAnswerStillHasItsTokenConsumed(kind: TestStoreKind) async throws {
        try await Self.withAppOnTheLoop(kind) { server, app, device in
            var left: String?
            for _ in 0..<5 where left == nil {
                let token = try await Flow.ztoken(server, app, device: device)
                let before = try await Answers.fromMemory(server, Self.route)
                try await Self.refreshCopies(server, app, device: device)
                try await Self.sendAndLeave(port: try #require(server.client.port), Self.raw(app, Self.body(token), requestID: "gone"))
                for _ in 0..<50 where try await Answers.fromMemory(server, Self.route) == before { try await Task.sleep(for: .milliseconds(100)) }
                if try await Answers.fromMemory(server, Self.route) > before { left = token }
            }
            let token = try #require(left, "no query left behind was answered on the event loop")
            #expect(try await Flow.query(server, app, token).tokenState == .replayed)
            #expect(try await server.send(.get, "/health/live").status == .ok)
        }
    }

    /// A fresh query whose batch the database does not answer (its table locked) holds its place among
    /// the requests in flight until its bound, then gets the router's 503: `Retry-After`, and its
    /// connection ended (`RetryAfterMiddleware`: a body may be left unread).
    @Test func aQueryOnAStuckDatabaseHoldsItsSlotAndIsAnswered503AtItsBound() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await Self.withAppOnTheLoop(.postgres, configure: Self.twoSecondsOneSlot) { server, app, device in
            try await StoreService.withStore(server.store.location, logger: TestDatabase.logger) { store in
                let locked: SQL = """
                    SELECT count(*) AS n FROM pg_locks
                    WHERE relation = 'consumed_ztokens'::regclass AND mode = 'AccessExclusiveLock' AND granted
                    """
                var stuck = false
                for _ in 0..<3 where !stuck {
                    let token = try await Flow.ztoken(server, app, device: device)
                    try await Self.refreshCopies(server, app, device: device)
                    let lock = Task {
                        try await store.database.query(
                            "DO $$ BEGIN LOCK TABLE consumed_ztokens IN ACCESS EXCLUSIVE MODE; PERFORM pg_sleep(4); END $$"
                        )
                    }
                    // Waited for at most 10 s: a lock that failed ends the test, not hangs it.
                    let asked = ContinuousClock.now
                    while try await store.database.query(locked).first?.int("n") != 1 {
                        try #require(ContinuousClock.now - asked < .seconds(10), "the table was never locked")
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    let before = try await Answers.fromMemory(server, Self.route)
                    let started = ContinuousClock.now
                    async let answer = Answers.exchange(
                        port: try #require(server.client.port),
                        [Self.raw(app, Self.body(token), requestID: "stuck")],
                        marker: nil
                    )
                    try await Task.sleep(for: .milliseconds(500))
                    let whileStuck = try await server.send(.get, "/v1/backend/whoami", headers: app.backend)
                    let (text, closed) = try await answer
                    let waited = ContinuousClock.now - started
                    try await lock.value
                    // (The copies live 2 s, which a loaded machine can let pass: asked again until the loop took it.)
                    guard try await Answers.fromMemory(server, Self.route) > before else { continue }
                    stuck = true
                    #expect(whileStuck.status == .serviceUnavailable && whileStuck.headers[.retryAfter] != nil, "\(whileStuck.status)")
                    #expect(text.hasPrefix("HTTP/1.1 503") && text.contains("database_unavailable"), "\(text)")
                    #expect(text.localizedCaseInsensitiveContains("retry-after: 2") && text.localizedCaseInsensitiveContains("connection: close"))
                    #expect(closed && waited >= .milliseconds(1_500) && waited < .seconds(10), "\(waited)")
                }
                #expect(stuck, "no query on the stuck database was the event loop's")
            }
            #expect(try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device)).tokenState == .fresh)
        }
    }

    /// Sends `text` on a new connection and closes it at once, reading nothing.
    static func sendAndLeave(port: Int, _ text: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                continuation.resume(
                    with: Result {
                        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                        try #require(descriptor >= 0)
                        defer { close(descriptor) }
                        var address = sockaddr_in()
                        address.sin_family = sa_family_t(AF_INET)
                        address.sin_port = in_port_t(UInt16(port).bigEndian)
                        address.sin_addr.s_addr = inet_addr("127.0.0.1")
                        let connected = withUnsafePointer(to: &address) {
                            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                            }
                        }
                        try #require(connected == 0)
                        let bytes = Array(text.utf8)
                        try #require(send(descriptor, bytes, bytes.count, 0) == bytes.count)
                    }
                )
            }.start()
        }
    }
}
