import GatehouseCore
import GatehouseStore
import HTTPTypes
import Hummingbird
import Logging

/// The problem+json vocabulary, rendered once, for the audiences that speak it (operators, backends,
/// the gateway, the open routes, the probes) and for what no group answered (a path no route has, a
/// method the path does not take). The audiences with a vocabulary of their own render it first
/// (`AudienceErrors`, the console's pages) and what they render passes through here as it is.
/// Anything unexpected is logged with the request id and becomes a bare 500.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            throw mapped(error, request: request, context: context)
        }
    }

    /// The error as it is answered: a `Problem`, or the response an audience's renderer already made.
    func mapped(_ error: any Error, request: Request, context: Context) -> any Error {
        switch error {
        case let problem as Problem: return problem
        case let error as HTTPError: return problem(for: error.status, request: request)
        case is DomainError, is StoreError: return Self.problem(for: error, logger: context.logger)
        case let rendered as any AudienceRenderedError: return rendered
        case let error as any HTTPResponseError: return problem(for: error.status, request: request)
        default: return Self.problem(for: error, logger: context.logger)
        }
    }

    /// A domain or store error's problem, logged where an operator must see it; any other error is
    /// logged by its type and becomes a bare 500. Also for the answers given on the event loop.
    static func problem(for error: any Error, logger: Logger) -> Problem {
        switch error {
        case let problem as Problem: return problem
        case let error as DomainError:
            if error.code == .masterKeyInvalid || error.code == .sealedSecretUnreadable {
                logger.error("secret unreadable", metadata: ["error": "\(error)"])
            }
            return Problem(error)
        case let error as StoreError:
            if case .conflict = error {
            } else if case .notFound = error {
            } else {
                logger.error("store failure", metadata: ["error": "\(error)"])
            }
            return Problem(error)
        default:
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return Problem.internalError()
        }
    }

    private func problem(for status: HTTPResponse.Status, request: Request) -> Problem {
        switch status {
        case .notFound:
            let allowed = routes.methods(matching: request.uri.path)
            guard !allowed.isEmpty else {
                return Problem(.notFound, code: "route_not_found", title: "Not found", detail: "No endpoint at this path.")
            }
            var problem = Problem(
                .methodNotAllowed,
                code: "method_not_allowed",
                title: "Method not allowed",
                detail: "This path accepts \(allowed.joined(separator: ", "))."
            )
            problem.extraHeaders[.allow] = allowed.joined(separator: ", ")
            return problem
        case .contentTooLarge:
            return Problem(.contentTooLarge, code: "body_too_large", title: "Body too large")
        case .badRequest:
            return Problem(.badRequest, code: "bad_request", title: "Bad request")
        default:
            return Problem(status, code: "http_\(status.code)", title: status.reasonPhrase)
        }
    }
}
