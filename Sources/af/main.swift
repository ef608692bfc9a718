import AFCommandLine
#if canImport(Glibc)
import Glibc
#endif

signal(SIGPIPE, SIG_IGN)
// A file-size limit must surface as a write error (exit 9, .part kept), not kill af.
signal(SIGXFSZ, SIG_IGN)
let status = AFCommand.run(Environment.process(arguments: CommandLine.arguments))
// A command af started (--auth-cmd) that is still running when af ends, because a signal or
// a failure ended the run first, ends with it.
AFCommand.stopCommands()
AFCommand.awaitTransportSetup()
exit(status)
