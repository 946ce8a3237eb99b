import Foundation
import Hummingbird
import NIOCore

/// Serves `router` on a loopback port until `body` returns; `body` gets the base URL. For the peers
/// the tests stand up beside Gatehouse (a stub STS, an app's backend).
public func withLoopbackServer<Context: RequestContext>(
    _ router: Router<Context>,
    _ body: @Sendable (URL) async throws -> Void
) async throws where Context.Source == ApplicationRequestContextSource {
    let port = PortBox()
    let app = Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in await port.set(channel.localAddress?.port ?? 0) }
    )
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.runService() }
        var bound = 0
        while bound == 0 {
            try await Task.sleep(for: .milliseconds(20))
            bound = await port.value
        }
        try await body(URL(string: "http://127.0.0.1:\(bound)")!)
        group.cancelAll()
    }
}

private actor PortBox {
    var value = 0
    func set(_ port: Int) { value = port }
}
