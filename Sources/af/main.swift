import AFCommandLine
#if canImport(Glibc)
import Glibc
#endif

signal(SIGPIPE, SIG_IGN)
// A file-size limit must surface as a write error (exit 9, .part kept), not kill af.
signal(SIGXFSZ, SIG_IGN)
exit(AFCommand.run(Environment.process(arguments: CommandLine.arguments)))
