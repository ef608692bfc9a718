// af-fuzz: the fuzz targets of FuzzTargets, for libFuzzer or for replaying files.
//
// Built by Fuzz/run.sh with -sanitize=fuzzer,address -D AF_FUZZ, main() hands the target
// that AF_FUZZ_TARGET names to libFuzzer (LLVMFuzzerRunDriver) with libFuzzer's arguments.
// Built plainly (swift build), it replays files: af-fuzz TARGET FILE...
import AFCommandLine
#if canImport(Glibc)
import Glibc
#endif

#if AF_FUZZ
/// libFuzzer's entry for programs that have their own main().
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The target AF_FUZZ_TARGET names, chosen once before fuzzing starts.
nonisolated(unsafe) private var selected: (@Sendable ([UInt8]) -> Void)?

/// Runs libFuzzer on the target that AF_FUZZ_TARGET names.
@main
enum Fuzz {
    static func main() {
        let name = getenv("AF_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let target = FuzzTargets.target(named: name) else {
            let message = "af-fuzz: set AF_FUZZ_TARGET to one of: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n"
            _ = write(2, message, message.utf8.count)
            exit(64)
        }
        selected = target
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv) { data, size in
            selected?(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        })
    }
}
#else
/// Replays files through a target: `af-fuzz TARGET FILE...`.
@main
enum Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTargets.target(named: name) else {
            let message = "usage: af-fuzz TARGET FILE...; targets: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n"
            _ = write(2, message, message.utf8.count)
            exit(64)
        }
        for path in arguments.dropFirst() {
            guard let file = fopen(path, "rb") else { continue }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = fread(&buffer, 1, buffer.count, file)
                if count == 0 { break }
                bytes += buffer[0..<count]
            }
            fclose(file)
            target(bytes)
        }
    }
}
#endif
