import Hummingbird

/// The first middleware of an audience's group: whatever its guard or its handlers throw leaves in
/// that audience's vocabulary, rendered here once. `render` turns a refusal into the audience's
/// error; a fault it does not speak of passes on to the router's `ProblemMiddleware` (a bare 500, or a
/// 503 with `Retry-After`).
struct AudienceErrors: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let render: @Sendable (any Error) -> any Error

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            throw render(error)
        }
    }

    /// The SDK's numeric codes (`SDKError`).
    static let sdk = AudienceErrors(render: SDKError.from)
    /// The slider captcha's codes 1001-1005 (`CaptchaError`).
    static let captcha = AudienceErrors(render: CaptchaError.from)
    /// The OSS SDKs' `StatusCode` shape (`STSError`).
    static let sts = AudienceErrors(render: STSError.from)
}

/// An error already in its audience's vocabulary (the SDK's, the slider's, STS's): answered as it is.
protocol AudienceRenderedError: HTTPResponseError {}

extension SDKError: AudienceRenderedError {}
extension CaptchaError: AudienceRenderedError {}
extension STSError: AudienceRenderedError {}
