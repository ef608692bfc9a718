// EngineBatch URLS-FILE PARALLEL: GETs every URL of the file (one per line), PARALLEL in
// flight, each on its own session sharing one driver thread and connection cache (as
// `af batch` does), bodies kept in memory and dropped. Exits 1 if any request fails.
import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// The URLs of the file, one per line.
func readURLs(_ path: String) -> [String]? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var urls: [String] = []
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while case let count = getline(&line, &capacity, file), count > 0, let line {
        // Bytes, not Characters: splitting a String walks grapheme clusters, which cost
        // more per line than a request's work in the engine.
        var length = count
        while length > 0, line[length - 1] == 10 || line[length - 1] == 13 { length -= 1 }
        if length > 0 {
            urls.append(String(decoding: UnsafeRawBufferPointer(start: line, count: length), as: UTF8.self))
        }
    }
    return urls
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let parallel = Int(arguments[2]), parallel > 0, let urls = readURLs(arguments[1]) else {
    print("usage: EngineBatch URLS-FILE PARALLEL")
    exit(64)
}

/// Starts requests as others finish; touched only on the driving thread.
final class Runner: @unchecked Sendable {
    let urls: [String]
    let parallel: Int
    let primary = Session()
    var next = 0
    var inFlight = 0
    var done = 0
    var failed = 0

    init(urls: [String], parallel: Int) {
        self.urls = urls
        self.parallel = parallel
    }

    func pump() {
        while inFlight < parallel, next < urls.count {
            let url = urls[next]
            next += 1
            inFlight += 1
            let session = Session(configuration: Session.Configuration(), sharingConnectionsWith: primary)
            // As af batch sends them: nothing shows the head sent, so it is not recorded
            // (recording it turns on libcurl's verbose mode).
            var description = RequestDescription(url: url)
            description.options.recordsSentHead = false
            let request = session.request(description)
            request.onCompletion { response in
                self.primary.async {
                    self.inFlight -= 1
                    self.done += 1
                    if response.error != nil { self.failed += 1 }
                    self.pump()
                }
            }
            request.resume()
        }
    }

    func run() -> Int32 {
        _ = primary.drive(start: { pump() }, until: { done == urls.count })
        return failed == 0 ? 0 : 1
    }
}

exit(Runner(urls: urls, parallel: parallel).run())
