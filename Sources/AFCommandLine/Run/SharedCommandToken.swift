@_spi(Locking) import AFEngine

/// One `--auth-cmd` token for all the lines of `af batch` that run the same command: the
/// command runs when the first line needs a token, and again only when a line that was sent
/// the current token is refused with a 401 — ten lines refused at once run it once, and the
/// lines that ask meanwhile wait for that one run. A failed run fails every line that needs
/// the token, without running the command again for each.
final class SharedCommandToken: Sendable {
    private struct State: Sendable {
        var result: Result<String, AFError>?
        var fetching = false
        var waiters: [@Sendable (Result<String, AFError>) -> Void] = []
    }

    let command: AuthCommand
    private let environment: [String: String]
    /// Says when the command runs on (`CommandTokenProvider.notice`); nil says nothing.
    private let notice: StandardInput.WaitNotice?
    private let state = Protected(State())

    init(command: AuthCommand, environment: [String: String], notice: StandardInput.WaitNotice? = nil) {
        self.command = command
        self.environment = environment
        self.notice = notice
    }

    /// The current token; with `stale`, the token a 401 refused, a new one unless another line
    /// has already replaced it.
    func token(replacing stale: String?, completion: @escaping @Sendable (Result<String, AFError>) -> Void) {
        let (ready, starts) = state.write { state -> (Result<String, AFError>?, Bool) in
            if let result = state.result {
                switch result {
                case .success(let token) where token != stale: return (result, false)
                case .failure: return (result, false)
                case .success: break
                }
            }
            state.waiters.append(completion)
            guard !state.fetching else { return (nil, false) }
            state.fetching = true
            state.result = nil
            return (nil, true)
        }
        if let ready { return completion(ready) }
        guard starts else { return }
        let command = command
        let environment = environment
        let notice = notice
        BackgroundWork.run { [state] in
            let result = CommandTokenProvider.fetch(command, environment: environment, notice: notice)
            let waiters = state.write { state -> [@Sendable (Result<String, AFError>) -> Void] in
                state.fetching = false
                state.result = result
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter(result) }
        }
    }

    /// What one line's authentication asks for its tokens.
    func provider() -> TokenProvider { LineProvider(shared: self) }

    /// A line's view of the shared token: its first request takes the current one, and a
    /// refresh after a 401 replaces the token that line was sent.
    private struct LineProvider: TokenProvider {
        let shared: SharedCommandToken
        let sent = Protected<String?>(nil)

        func token(completion: @escaping @Sendable (Result<String, AFError>) -> Void) {
            let sent = sent
            shared.token(replacing: sent.value) { result in
                if case .success(let token) = result { sent.write { $0 = token } }
                completion(result)
            }
        }
    }
}
