// CStartup has no API: linking it gives the process's arguments to Swift's CommandLine
// straight from the executable's initializer (see arguments.c).
