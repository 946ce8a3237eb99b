import Logging

/// The service's log lines, as swift-log's `StreamLogHandler` writes them (to standard error, the same
/// format), with the logger's metadata rendered only when a line is written. `StreamLogHandler`
/// renders all of its metadata to text each time a key is set, and every request sets one (its id,
/// `RequestIDMiddleware`) and usually logs nothing: that rendering was 4% of the server's CPU on a
/// refused risk query (docs/PERFORMANCE.md). Here the metadata is kept as values and handed to the
/// stream handler with each line, which renders it then.
struct DeferredMetadataLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        stream = StreamLogHandler.standardError(label: label)
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        stream.log(event: event)
    }
}
