import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import GatehouseServer

/// `BodyDeadlineHandler` against the reads the server asks for, on NIO's embedded channel, whose
/// virtual clock the handler keeps its deadline by: the time the server holds the connection's
/// reading back (a full queue of pipelined requests) does not count against the client, and the
/// time it waits on the client does. The raw-socket tests (`BodyDeadlineTests`) cover the whole server.
@Suite struct BodyDeadlineHeldBackTests {
    /// Notes the deadline's error; asks for the next read as each part arrives when `readsOnArrival`.
    final class Reader: ChannelInboundHandler {
        typealias InboundIn = HTTPRequestPart
        var expired = false
        let readsOnArrival: Bool

        init(readsOnArrival: Bool) {
            self.readsOnArrival = readsOnArrival
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if readsOnArrival { context.read() }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if error is BodyDeadlineHandler.Expired { expired = true }
        }
    }

    static func channel(readsOnArrival: Bool) throws -> (EmbeddedChannel, EmbeddedEventLoop, Reader) {
        let loop = EmbeddedEventLoop()
        let reader = Reader(readsOnArrival: readsOnArrival)
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers([BodyDeadlineHandler(limit: .seconds(1)), reader])
        return (channel, loop, reader)
    }

    static let head = HTTPRequestPart.head(
        HTTPRequest(method: .post, scheme: nil, authority: "x", path: "/v1/captcha/siteverify", headerFields: [.contentLength: "10"])
    )

    @Test func timeTheServerHoldsReadingBackDoesNotCount() throws {
        let (channel, loop, reader) = try Self.channel(readsOnArrival: false)
        // The head arrives and the server asks for nothing more: its queue is full.
        try channel.writeInbound(Self.head)
        loop.advanceTime(by: .seconds(5))
        #expect(!reader.expired, "held back for 5 s against a 1 s deadline")
        // The server asks for the body: from here the client has what was left of its second.
        channel.read()
        loop.advanceTime(by: .milliseconds(900))
        #expect(!reader.expired)
        loop.advanceTime(by: .milliseconds(200))
        #expect(reader.expired, "the client had its second once the server read again")
    }

    @Test func aClientThatNeverSendsItsBodyStillMeetsTheDeadline() throws {
        // The server asks for the next read as soon as the head arrives: every second is the client's.
        let (channel, loop, reader) = try Self.channel(readsOnArrival: true)
        channel.read()
        try channel.writeInbound(Self.head)
        loop.advanceTime(by: .milliseconds(1_100))
        #expect(reader.expired)
    }

    @Test func aReadAskedAfterTheReadEndedStillCountsFromThere() throws {
        let (channel, loop, reader) = try Self.channel(readsOnArrival: false)
        try channel.writeInbound(Self.head)
        channel.read()
        loop.advanceTime(by: .milliseconds(1_100))
        #expect(reader.expired)
    }

    @Test func aBodyThatEndsCallsTheDeadlineOff() throws {
        let (channel, loop, reader) = try Self.channel(readsOnArrival: true)
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "0123456789")))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        loop.advanceTime(by: .seconds(5))
        #expect(!reader.expired)
    }
}
