@testable import AFCommandLine
import AFEngine
import Testing

/// SPEC §5: the error line says what to do only where there is something left to do.
@Suite struct ExitMessageTests {
    private let unanswered = AFError.transport(TransportFailure(
        kind: .connectionReset,
        message: "127.0.0.1:8443 closed its HTTP/2 connection before answering (servers close one after so many requests)",
        cause: .unansweredOnReusedConnection
    ))

    /// Tried once: --retry (and --retry-all-methods for a POST) would send it again.
    @Test func anUnansweredRequestTriedOnceSuggestsRetrying() {
        #expect(ExitMapping.message(for: unanswered, attempts: 1)
            == "127.0.0.1:8443 closed its HTTP/2 connection before answering (servers close one after so many requests); --retry sends it again (and --retry-all-methods a POST, which the server may have processed)")
    }

    /// Retried already: both options were given, so the line names only the tries.
    @Test func anUnansweredRequestRetriedAlreadySuggestsNothingMore() {
        #expect(ExitMapping.message(for: unanswered, attempts: 4)
            == "127.0.0.1:8443 closed its HTTP/2 connection before answering (servers close one after so many requests) (after 4 attempts)")
    }
}
