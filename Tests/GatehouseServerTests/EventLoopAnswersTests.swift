import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Answers given on the event loop from memory (`EventLoopAnswers`): the gate's "let through" and a
/// risk query's refused token, over loopback HTTP against the built application on both stores. The
/// same answer, headers, request id, metrics and counts as the router's; never a refusal the router
/// must give, another spelling of the path, a body not whole within its first read, or a change this
/// instance already made; and never an answer ahead of an earlier request on its connection. A fresh
/// token's risk query, answered once its batch is written: `EventLoopRiskQueriesTests`.
@Suite struct EventLoopAnswersTests {
    typealias Flow = DeviceRiskFlowTests
    typealias Attest = AttestationFlowTests
    static let attestID = HTTPField.Name("X-Gatehouse-Attest-Id")!
    static let deviceID = HTTPField.Name("X-Gatehouse-Device-Id")!
    static let verdict = HTTPField.Name("X-Gatehouse-Attest-Verdict")!
    static let requestID = HTTPField.Name("X-Request-Id")!

    /// An app whose attester gates `/api/`, a started device's token for it, and the gate's request headers.
    static func gatedApp(
        _ server: ServerFixture,
        attester: String = #"{"attestId":"api-pow","pow":{"maxNumber":1000},"adaptive":false"#
    )
        async throws -> (app: Flow.AppCredentials, device: String, headers: HTTPFields)
    {
        let app = try await Flow.createApp(server)
        let device = try await Flow.startDevice(server, app)
        let created = try await server.send(
            .post,
            "/v1/admin/apps/\(app.appKey)/attesters",
            body: attester + #","routes":[{"method":"*","pathPrefix":"/api/"}]}"#
        )
        #expect(created.status == .created)
        let payload = try Attest.solve(try await Attest.challenge(server, app, "api-pow", device))
        let token = try await Attest.redeem(server, app, "api-pow", device, payload).decoded(Components.Schemas.AttestTokenResponse.self)
        let headers: HTTPFields = [
            HTTPField.Name("X-Gatehouse-Authorization")!: try #require(app.backend[.authorization]),
            HTTPField.Name("X-Original-Method")!: "GET",
            HTTPField.Name("X-Original-URI")!: "/api/orders",
            HTTPField.Name(token.tokenHeader)!: token.token,
        ]
        return (app, device, headers)
    }

    /// The answers given from memory on `route`.
    static func fromMemory(_ server: ServerFixture, _ route: String = "/v1/gate/verify") async throws -> Double {
        try await metric(server, "gatehouse_answers_in_memory_total", ["route=\"\(route)\""])
    }

    /// The sum of a labelled metric's lines whose labels include every one of `labels`.
    static func metric(_ server: ServerFixture, _ name: String, _ labels: [String]) async throws -> Double {
        let text = String(buffer: try await server.client.execute(uri: "/metrics", method: .get).body)
        return text.split(separator: "\n").filter { line in line.hasPrefix(name + "{") && labels.allSatisfy { line.contains($0) } }
            .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0, +)
    }

    static func with(_ headers: HTTPFields, _ name: String, _ value: String) -> HTTPFields {
        var changed = headers
        changed[HTTPField.Name(name)!] = value
        return changed
    }

    /// Asks the gate with `headers` until an answer comes from memory (at most 20 times, each a 204):
    /// the copies live 2 s, which a loaded machine can let pass between two requests. Returns the asks made.
    static func askUntilAnsweredFromMemory(
        _ server: ServerFixture,
        _ headers: HTTPFields
    ) async throws -> (
        asks: Int, answered: Bool, last: TestResponse?
    ) {
        let before = try await Self.fromMemory(server)
        var last: TestResponse?
        for asks in 1...20 {
            last = try await server.send(.get, "/v1/gate/verify", headers: headers)
            #expect(last?.status == .noContent)
            if try await Self.fromMemory(server) > before { return (asks, true, last) }
        }
        return (20, false, last)
    }

    @Test(arguments: TestStoreKind.available)
    func aTokenSeenBeforeIsLetThroughFromMemoryAsTheRouterLetsItThrough(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let (app, device, gated) = try await Self.gatedApp(server)
            let first = try await server.send(.get, "/v1/gate/verify", headers: Self.with(gated, "X-Request-Id", "first-ask"))
            #expect(first.status == .noContent && first.headers[Self.requestID] == "first-ask")
            #expect(first.headers[Self.attestID] == "api-pow" && first.headers[Self.deviceID] == device && first.headers[Self.verdict] == "valid")
            #expect(try await Self.fromMemory(server) == 0, "the router verifies a token the first time")

            for number in 1...5 {
                let again = try await server.send(.get, "/v1/gate/verify", headers: Self.with(gated, "X-Request-Id", "ask-\(number)"))
                #expect(again.status == .noContent && again.headers[Self.requestID] == "ask-\(number)")
                for name in [Self.attestID, Self.deviceID, Self.verdict] { #expect(again.headers[name] == first.headers[name]) }
                #expect(again.headers[.contentLength] == nil && again.body.isEmpty)
            }
            let generated = try await server.send(.get, "/v1/gate/verify?challengeStatus=428", headers: gated)
            #expect(generated.status == .noContent && generated.headers[Self.requestID]?.count == 36)
            let open = try await server.send(.get, "/v1/gate/verify", headers: Self.with(gated, "X-Original-URI", "/public/page"))
            #expect(open.status == .noContent && open.headers[Self.attestID] == nil)
            let (asks, answered, last) = try await Self.askUntilAnsweredFromMemory(server, gated)
            #expect(answered)
            // `Date` and `Server`, as Hummingbird sets them on the router's answers.
            let fromMemory = try #require(last)
            #expect(fromMemory.headers[.server] == first.headers[.server] && first.headers[.server] == "gatehouse")
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let date = try #require(fromMemory.headers[.date].flatMap { formatter.date(from: $0) }, "\(fromMemory.headers)")
            #expect(abs(date.timeIntervalSinceNow) < 60 && first.headers[.date] != nil)
            // Counted as the router counts, whichever answered: every 204 of the route, every valid verdict.
            let route = #"route="/v1/gate/verify""#
            #expect(try await Self.metric(server, "gatehouse_http_requests_total", [route, #"status="204""#]) == Double(8 + asks))
            #expect(try await Self.metric(server, "gatehouse_attest_verdicts_total", [#"verdict="valid""#, "\"\(app.appKey)\""]) == Double(7 + asks))
        }
    }

    @Test(arguments: TestStoreKind.available)
    func refusalsOtherSpellingsAndChangesAreLeftToTheRouter(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let (app, _, gated) = try await Self.gatedApp(server)
            #expect(try await server.send(.get, "/v1/gate/verify", headers: gated).status == .noContent)
            let wrongSecret = "Basic " + Data("\(app.appKey):\(app.serverSecret)x".utf8).base64EncodedString()
            let token = try #require(gated[HTTPField.Name("EO-Attest-Token")!])
            let altered = String(token.dropLast()) + (token.hasSuffix("A") ? "B" : "A")
            // nil: any refusal (4xx) of another spelling of the path.
            let refused: [(path: String, headers: HTTPFields, status: HTTPResponse.Status?)] = [
                ("/v1/gate/verify", Self.with(gated, "X-Gatehouse-Authorization", wrongSecret), .unauthorized),
                ("/v1/gate/verify", Self.with(gated, "EO-Attest-Token", altered), .unauthorized),
                ("/v1/gate/verify", Self.with(gated, "EO-Attest-Token", ""), .unauthorized),
                ("/v1/gate/verify?challengeStatus=500", gated, .badRequest),
                ("/v1/gate/verify", Self.with(gated, "X-Original-URI", ""), .badRequest),
                ("/v1/gate/verify/", gated, nil),
                ("/v1//gate/verify", gated, nil),
                ("/V1/gate/verify", gated, nil),
                ("/v1/gate/%76erify", gated, nil),
            ]
            for (path, headers, status) in refused {
                let answer = try await server.send(.get, path, headers: headers)
                let expected = status.map { answer.status == $0 } ?? (400..<500).contains(answer.status.code)
                #expect(expected, "\(path) answered \(answer.status.code)")
            }
            #expect(try await server.send(.head, "/v1/gate/verify", headers: gated).status.code < 500)
            #expect(try await Self.fromMemory(server) == 0)

            // A change made through this instance is seen by the next request.
            #expect(try await Self.askUntilAnsweredFromMemory(server, gated).answered)
            let signed = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/attesters/api-pow", body: #"{"requireSignature":true}"#)
            #expect(signed.status == .ok)
            let unsigned = try await server.send(.get, "/v1/gate/verify", headers: gated)
            #expect(unsigned.status == .forbidden && unsigned.problem?.code == "signature_refused")
            #expect(
                try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/attesters/api-pow", body: #"{"requireSignature":false}"#).status == .ok
            )
            #expect(try await Self.askUntilAnsweredFromMemory(server, gated).answered)
            #expect(try await server.send(.post, "/v1/admin/apps/\(app.appKey)/disable").status == .ok)
            let beforeDisabled = try await Self.fromMemory(server)
            let disabled = try await server.send(.get, "/v1/gate/verify", headers: gated)
            #expect(disabled.status == .forbidden && disabled.problem?.code == "app_disabled")
            #expect(try await Self.fromMemory(server) == beforeDisabled)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aTokenWithUseLimitsIsCountedByTheStoreEveryTime(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let (_, _, gated) = try await Self.gatedApp(
                server,
                attester: #"{"attestId":"api-pow","pow":{"maxNumber":1000},"adaptive":false,"maxUses":3"#
            )
            var statuses: [HTTPResponse.Status] = []
            for _ in 1...5 { statuses.append(try await server.send(.get, "/v1/gate/verify", headers: gated).status) }
            #expect(statuses == [.noContent, .noContent, .noContent, .unauthorized, .unauthorized])
            #expect(try await Self.fromMemory(server) == 0)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func anAnswerNeverOvertakesAnEarlierRequestOnItsConnection(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let (_, _, gated) = try await Self.gatedApp(server)
            #expect(try await server.send(.get, "/v1/gate/verify", headers: gated).status == .noContent)
            // The router answers the first (`/health/live` on the serving port; `/health/ready` could
            // answer 503 under the whole suite's load, which is not this test's business).
            var pipelined = "GET /health/live HTTP/1.1\r\nHost: gate\r\nX-Request-Id: earlier\r\n\r\n"
            pipelined += "GET /v1/gate/verify HTTP/1.1\r\nHost: gate\r\nX-Request-Id: later\r\n"
            for field in gated { pipelined += "\(field.name.rawName): \(field.value)\r\n" }
            pipelined += "\r\n"
            let answers = try await Self.exchange(port: try #require(server.client.port), pipelined, until: "X-Request-Id: later")
            let earlier = try #require(answers.range(of: "X-Request-Id: earlier", options: .caseInsensitive))
            let later = try #require(answers.range(of: "X-Request-Id: later", options: .caseInsensitive))
            #expect(earlier.lowerBound < later.lowerBound, "\(answers)")
            #expect(answers.hasPrefix("HTTP/1.1 200") && answers.contains("HTTP/1.1 204"))
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aRequestThatAsksForItsConnectionToCloseGetsItClosed(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let (_, _, gated) = try await Self.gatedApp(server)
            #expect(try await Self.askUntilAnsweredFromMemory(server, gated).answered)
            let before = try await Self.fromMemory(server)
            var request = "GET /v1/gate/verify HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n"
            for field in gated { request += "\(field.name.rawName): \(field.value)\r\n" }
            let (answer, closed) = try await Self.exchange(port: try #require(server.client.port), [request + "\r\n"], marker: nil)
            #expect(answer.hasPrefix("HTTP/1.1 204") && closed, "\(answer)")
            #expect(try await Self.fromMemory(server) == before)
        }
    }

    /// A forged ztoken's risk query (its MAC altered), as the backend sends it, from `address` (each
    /// address's first few refused decisions a minute are stored whole, the rest counted).
    static func forgedQuery(
        _ app: Flow.AppCredentials,
        _ token: String,
        requestID: String,
        address: String = "203.0.113.7"
    ) -> (
        HTTPFields, String
    ) {
        var forged = Array(token)
        forged[60] = forged[60] == "A" ? "B" : "A"
        var headers = app.backend
        headers[Self.requestID] = requestID
        return (headers, #"{"ztoken":"\#(String(forged))","eventId":3301,"accountId":"victim","clientIp":"\#(address)"}"#)
    }

    @Test(arguments: TestStoreKind.available)
    func aRefusedTokenIsDecidedFromMemoryAsTheRouterDecidesIt(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let route = "/v1/risk/query"
            var answers: [TestResponse] = []
            for number in 0..<20 {
                let token = try await Flow.ztoken(server, app, device: device)
                let (headers, body) = Self.forgedQuery(app, token, requestID: "forged-\(number)", address: "203.0.113.\(number + 1)")
                let answer = try await server.send(.post, route, headers: headers, body: body)
                #expect(answer.status == .ok && answer.headers[Self.requestID] == "forged-\(number)")
                answers.append(answer)
                if number > 0, try await Self.fromMemory(server, route) > 0 { break }
            }
            #expect(try await Self.fromMemory(server, route) > 0, "no forged query was answered from memory")
            // The router's answer (the first: the app's policy was not in memory yet) and memory's have one shape.
            let first = try #require(answers.first?.json)
            let last = try #require(answers.last?.json)
            #expect(Set(first.keys) == Set(last.keys) && last["tokenState"] as? String == "forged")
            for key in ["decision", "score", "tokenState", "eventId", "accountId", "appKey"] {
                #expect("\(first[key] ?? "-")" == "\(last[key] ?? "-")", "\(key)")
            }
            // Its decision is written behind as the router's are, and read back on this instance.
            let id = try #require(last["decisionId"] as? String)
            let stored = try await server.send(.get, "/v1/risk/decisions/\(id)", headers: app.backend)
            #expect(stored.status == .ok && stored.json?["tokenState"] as? String == "forged")
            #expect(
                try await Self.metric(server, "gatehouse_http_requests_total", ["route=\"\(route)\"", #"status="200""#]) == Double(answers.count)
            )

            // A credential that does not hold, a body over the limit and values the query refuses are the router's.
            let before = try await Self.fromMemory(server, route)
            let token = try await Flow.ztoken(server, app, device: device)
            let (headers, body) = Self.forgedQuery(app, token, requestID: "r")
            var wrongSecret = headers
            wrongSecret[.authorization] = "Basic " + Data("\(app.appKey):\(app.serverSecret)x".utf8).base64EncodedString()
            let routers: [(HTTPFields, String, HTTPResponse.Status)] = [
                (wrongSecret, body, .unauthorized), (wrongSecret, "{", .unauthorized),
                (headers, String(repeating: " ", count: 5000), .contentTooLarge),
                (headers, body.replacingOccurrences(of: "203.0.113.7", with: "not an address"), .badRequest),
            ]
            for (headers, body, status) in routers {
                let answer = try await server.send(.post, route, headers: headers, body: body)
                #expect(answer.status == status, "\(body.prefix(40)) answered \(answer.status.code)")
            }
            #expect(try await Self.fromMemory(server, route) == before)

            // A body the router would refuse gets its problem from memory, with the request's id.
            var textPlain = headers
            textPlain[.contentType] = "text/plain"
            let problems: [(HTTPFields, String, HTTPResponse.Status, String)] = [
                (headers, "{", .badRequest, "malformed_json"), (textPlain, body, .unsupportedMediaType, "unsupported_media_type"),
                (headers, #"{"ztoken":"x","eventId":3301,"accountId":"a","clientIp":"1.2.3.4","extra":1}"#, .badRequest, "unknown_field"),
                (headers, #"{"ztoken":"x","eventId":3301.5,"accountId":"a","clientIp":"1.2.3.4"}"#, .badRequest, "invalid_body"),
            ]
            for (headers, body, status, code) in problems {
                let answer = try await server.send(.post, route, headers: headers, body: body)
                #expect(answer.status == status && answer.problem?.code == code, "\(body.prefix(40)) answered \(answer.status.code)")
                #expect(answer.problem?.requestId == "r" && answer.headers[Self.requestID] == "r")
            }
            // (Copies live 2 s, which a loaded machine can let pass: asked again until one is from memory.)
            var asks = 0
            while try await Self.fromMemory(server, route) == before, asks < 20 {
                #expect(try await server.send(.post, route, headers: headers, body: "{").problem?.code == "malformed_json")
                asks += 1
            }
            #expect(try await Self.fromMemory(server, route) > before)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aBodyNotWholeInItsFirstReadGoesToTheRouter(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let (headers, body) = Self.forgedQuery(app, try await Flow.ztoken(server, app, device: device), requestID: "split")
            for _ in 0..<3 { _ = try await server.send(.post, "/v1/risk/query", headers: headers, body: body) }
            var head = "POST /v1/risk/query HTTP/1.1\r\nHost: risk\r\nContent-Length: \(body.utf8.count)\r\n"
            for field in headers { head += "\(field.name.rawName): \(field.value)\r\n" }
            // The body's second part follows 300 ms after the first; a server slowed by the rest of the
            // suite can find both in one read, and then rightly answers from memory: asked again
            // until one split body reached the server split.
            var routed = false
            for _ in 0..<5 where !routed {
                let before = try await Self.fromMemory(server, "/v1/risk/query")
                let answer = try await Self.exchange(
                    port: try #require(server.client.port),
                    [head + "\r\n" + body.prefix(20), String(body.dropFirst(20))],
                    until: "}"
                )
                #expect(answer.hasPrefix("HTTP/1.1 200") && answer.contains("\"forged\""), "\(answer)")
                routed = try await Self.fromMemory(server, "/v1/risk/query") == before
            }
            #expect(routed, "every split body was answered from memory")
        }
    }

    /// Sends `text` in one write on a new connection and reads until `marker` has arrived (5 s at most).
    static func exchange(port: Int, _ text: String, until marker: String) async throws -> String {
        try await exchange(port: port, [text], until: marker)
    }

    /// Sends each of `writes` 300 ms after the last, then reads until `marker` has arrived (5 s at most).
    static func exchange(port: Int, _ writes: [String], until marker: String) async throws -> String {
        try await exchange(port: port, writes, marker: marker).text
    }

    /// The same, reading until the server closes the connection when `marker` is nil; `closed` says
    /// whether it did (within 5 s). The socket blocks, so it runs on a thread of its own: on the
    /// concurrency pool it would hold one of the threads the server's handlers run on.
    static func exchange(port: Int, _ writes: [String], marker: String?) async throws -> (text: String, closed: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try blockingExchange(port: port, writes, marker: marker) }) }.start()
        }
    }

    private static func blockingExchange(port: Int, _ writes: [String], marker: String?) throws -> (text: String, closed: Bool) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        for (index, text) in writes.enumerated() {
            if index > 0 { usleep(300_000) }
            let bytes = Array(text.utf8)
            try #require(send(descriptor, bytes, bytes.count, 0) == bytes.count)
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while marker.map({ !String(decoding: received, as: UTF8.self).localizedCaseInsensitiveContains($0) }) ?? true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return (String(decoding: received, as: UTF8.self), count == 0) }
            received += buffer[..<count]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }
}
