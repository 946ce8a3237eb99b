import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One of the app's own requests and its answer over URLSession (`AttestingSession`), on every
/// platform (the completion-handler API, which Linux's Foundation has in full).
enum HTTPExchange {
    static func send(_ request: URLRequest, session: URLSession) async throws -> (Data, HTTPURLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }
            .resume()
        }
    }
}
