// An example that uses only the AFEngine library: a GET with a retry policy and a pinned
// public key, printing the status, the body size and every attempt's metrics.
//
//   af-example-pinned-get URL PIN [CA.pem]
//
// PIN is `sha256//BASE64=` (see `af pin HOST`); CA.pem is a private CA to trust, if any.
import AFEngine
#if canImport(Glibc)
import Glibc
#endif

@main
struct PinnedGet {
    static func main() async {
        // The exit status is decided in `run`, and `exit` is called only once everything
        // it made (session, request) has been released.
        exit(await run())
    }

    /// Runs the example and returns the exit status.
    static func run() async -> Int32 {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 2 || arguments.count == 3 else {
            print("usage: af-example-pinned-get URL PIN [CA.pem]")
            return 64
        }
        let (url, pin) = (arguments[0], arguments[1])
        let host: String
        do {
            host = try HTTPURL(parsing: url).host
        } catch {
            print("invalid URL: \(error.description)")
            return 64
        }
        // Standard verification (against the private CA when given) and the pinned key.
        let trust = CompositeTrustEvaluator([
            DefaultTrustEvaluator(caBundle: arguments.count == 3 ? arguments[2] : nil),
            PublicKeysTrustEvaluator(pins: [pin]),
        ])
        let session = Session(configuration: Session.Configuration(
            interceptor: Interceptor(adapters: [], retriers: [RetryPolicy(retryLimit: 2, delayScale: 0.2)]),
            trustManager: ServerTrustManager(evaluators: [host: trust])
        ))
        defer { session.shutdown() }
        let request = session.request(RequestDescription(url: url), validation: StatusValidation(acceptable: [200...299]))
        do {
            let data = try await request.serializingData()
            print("status: \(data.status ?? 0)")
            print("body: \(data.body.count) bytes")
            for attempt in data.response.attempts {
                let metrics = attempt.metrics
                print("attempt \(attempt.number): \(attempt.response?.status ?? 0) over \(metrics?.httpVersion ?? "?")"
                    + ", \(Int(((metrics?.total ?? 0) * 1000).rounded())) ms total"
                    + ", pin: \(metrics?.tls?.pinResult ?? "none")")
            }
        } catch {
            print("failed: \(error.description)")
            for attempt in request.attempts {
                print("attempt \(attempt.number): \(attempt.error?.description ?? "ok")")
            }
            return 1
        }
        return 0
    }
}
