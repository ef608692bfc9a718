internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Runs every transfer of a session on one thread, with libcurl's multi interface.
///
/// Other threads never touch libcurl handles: they queue commands and wake the driver's
/// `curl_multi_poll` with `curl_multi_wakeup`, the one multi call that is thread-safe.
/// Cookies, the DNS cache and TLS sessions are shared between transfers through a share
/// handle that only this thread uses.
final class TransferDriver: Sendable {
    enum Command: Sendable {
        case add(Transfer)
        case cancel(Transfer, AFError.Cancellation)
        case pause(Transfer)
        case unpause(Transfer)
        /// Runs a closure on the driver thread with the share handle (cookie import/export).
        case withShare(@Sendable (UnsafeMutableRawPointer) -> Void)
    }

    private struct Handles: @unchecked Sendable {
        let multi: UnsafeMutableRawPointer
        let share: UnsafeMutableRawPointer
    }

    private struct State: Sendable {
        var commands: [Command] = []
        var threadStarted = false
    }

    private let handles: Handles
    private let state = Protected(State())

    init() {
        CurlRuntime.ensureInitialized()
        guard let multi = curl_multi_init(), let share = curl_share_init() else {
            fatalError("libcurl could not allocate a multi or share handle")
        }
        _ = afcurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        _ = afcurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        handles = Handles(multi: multi, share: share)
    }

    /// Queues a command for the driver thread, starting the thread on first use.
    func submit(_ command: Command) {
        let start = state.write { state -> Bool in
            state.commands.append(command)
            if state.threadStarted { return false }
            state.threadStarted = true
            return true
        }
        if start { startThread() }
        curl_multi_wakeup(handles.multi)
    }

    private func startThread() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let driver = Unmanaged<TransferDriver>.fromOpaque(argument).takeRetainedValue()
            driver.run()
            return nil
        }, context)
        if created != 0 { fatalError("cannot start the transfer thread: \(POSIXError.describe(created))") }
        pthread_detach(thread)
    }

    private func run() {
        let multi = handles.multi
        var active: [UnsafeMutableRawPointer: Transfer] = [:]
        var running: Int32 = 0
        while true {
            let commands = state.write { state -> [Command] in
                defer { state.commands.removeAll() }
                return state.commands
            }
            for command in commands { execute(command, active: &active) }
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                if let transfer = active.removeValue(forKey: easy) {
                    detach(transfer)
                    transfer.finish(code: code)
                }
            }
            curl_multi_poll(multi, nil, 0, active.isEmpty ? 60_000 : 1000, nil)
        }
    }

    private func execute(_ command: Command, active: inout [UnsafeMutableRawPointer: Transfer]) {
        switch command {
        case .add(let transfer):
            let easy = transfer.easy.raw
            _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, handles.share)
            let code = curl_multi_add_handle(handles.multi, easy)
            if code == CURLM_OK {
                active[easy] = transfer
            } else {
                _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, nil)
                transfer.fail(.invalidRequest(reason: "libcurl refused the transfer: \(String(cString: curl_multi_strerror(code)))"))
                transfer.finish(code: CURLE_FAILED_INIT)
            }
        case .cancel(let transfer, let reason):
            guard active.removeValue(forKey: transfer.easy.raw) != nil else { return }
            transfer.cancellation = reason
            detach(transfer)
            transfer.finish(code: CURLE_ABORTED_BY_CALLBACK)
        case .pause(let transfer):
            if active[transfer.easy.raw] != nil { curl_easy_pause(transfer.easy.raw, afcurl_pause_all()) }
        case .unpause(let transfer):
            if active[transfer.easy.raw] != nil { curl_easy_pause(transfer.easy.raw, afcurl_pause_cont()) }
        case .withShare(let body):
            body(handles.share)
        }
    }

    /// Takes a finished handle out of the multi and the share, on this thread, so that its
    /// later cleanup (wherever the last reference drops) touches neither.
    private func detach(_ transfer: Transfer) {
        curl_multi_remove_handle(handles.multi, transfer.easy.raw)
        _ = afcurl_easy_setopt_ptr(transfer.easy.raw, CURLOPT_SHARE, nil)
    }
}
