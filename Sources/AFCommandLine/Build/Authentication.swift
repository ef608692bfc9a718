import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Credentials from `-a`, `-A` and the URL (SPEC §8).
enum Authentication {
    /// The credentials for the request, prompting for a missing password on a terminal.
    static func credentials(settings: Settings, url: HTTPURL, environment: Environment) throws(CommandFailure) -> Credentials? {
        let scheme = settings.authType ?? .basic
        if let auth = settings.auth {
            try checkLineBreaks(auth)
            if scheme == .bearer {
                guard !auth.isEmpty else { throw .usage("-a needs the token for --auth-type=bearer") }
                return Credentials(user: "", password: auth, scheme: .bearer)
            }
            if let (user, password) = auth.splitOnce(byte: UInt8(ascii: ":")) {
                return Credentials(user: String(user), password: String(password), scheme: scheme)
            }
            let password = try prompt(for: auth, host: url.host, environment: environment, allowed: !settings.ignoreStdin)
            return Credentials(user: auth, password: password, scheme: scheme)
        }
        if let user = url.user {
            // `http://user@host/` has an empty password, as curl and HTTPie read it: only -a
            // USER asks for one (a URL in a script must not wait at a prompt).
            return Credentials(user: user, password: url.password ?? "", scheme: scheme == .bearer ? .basic : scheme)
        }
        if let type = settings.authType, settings.authCmd == nil {
            // HTTPie: a scheme without credentials is a mistake, unless netrc has some.
            let netrc = settings.ignoreNetrc ? nil : try Netrc.load(environment: environment)
            if netrc?.credentials(for: url.host) == nil {
                throw .usage("--auth-type=\(type.rawValue) needs credentials: add -a USER[:PASS]\(type == .bearer ? " (the token)" : ""), or a netrc entry for \(url.host)")
            }
        }
        return nil
    }

    /// Refuses `-a` credentials with a line break or a NUL, which a bearer token would carry
    /// into a header line of its own and a password into credentials no one has; the usual
    /// one is the CR a file with CRLF line ends leaves in `-a "u:$(cat pass.txt)"`. The
    /// message does not repeat the secret.
    static func checkLineBreaks(_ auth: String) throws(CommandFailure) {
        guard LineBreaks.breaksALine(auth) else { return }
        if LineBreaks.endsWithStrayCarriageReturn(auth) {
            throw .usage("the credentials given with -a end with a carriage return (\\r), \(LineBreaks.strayCarriageReturnAdvice)")
        }
        throw .usage("the credentials given with -a hold a line break or a NUL character, which no credentials can; check how the value was made")
    }

    /// Reads a password from the terminal with echo off; a usage error when standard input
    /// is not a terminal, so a script never hangs and nothing is sent. The error does not
    /// repeat the user: in a script it is most often a token given without `-A bearer`, and
    /// the error line ends up in the job's log.
    static func prompt(for user: String, host: String, environment: Environment, allowed: Bool) throws(CommandFailure) -> String {
        let fix = "give -a USER:PASSWORD (USER: for an empty password, or -A bearer -a TOKEN for a token)"
        guard allowed else {
            throw .usage("-a gives a user without a password, and af may not ask for one with standard input ignored (-I, and on every line of af batch); \(fix)")
        }
        guard environment.stdinIsTerminal else {
            throw .usage("-a gives a user without a password, and standard input is not a terminal to ask on; \(fix)")
        }
        return readSecret(question: "Password for \(user)@\(host): ", environment: environment)
    }

    /// Asks `question` on standard error and reads one line from the terminal on standard
    /// input with echo off.
    static func readSecret(question: String, environment: Environment) -> String {
        let bytes = SilentTerminal.withEchoOff(on: environment.stdin) { () -> [UInt8] in
            _ = question.withCString { write(environment.stderr, $0, strlen($0)) }
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while read(environment.stdin, &byte, 1) == 1, byte != 10, byte != 13 {
                bytes.append(byte)
            }
            return bytes
        }
        _ = "\n".withCString { write(environment.stderr, $0, 1) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
