import AFCommandLine
#if canImport(Glibc)
import Glibc
#endif

signal(SIGPIPE, SIG_IGN)
exit(AFCommand.run(Environment.process(arguments: CommandLine.arguments)))
