import AFCommandLine
import Foundation

// af-docs: regenerates man/af.1 and completions/ from af's option table.
//   swift run af-docs           write the files (run from the repository root)
//   swift run af-docs --check   exit 1 when the committed files differ from the table

let check = CommandLine.arguments.dropFirst().first == "--check"
var outputs: [(String, String)] = [("man/af.1", ManPage.render())]
for (name, contents) in Completions.files { outputs.append(("completions/\(name)", contents)) }
var stale: [String] = []
for (path, contents) in outputs {
    let current = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    if current == contents { continue }
    if check {
        stale.append(path)
    } else {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        print("af-docs: wrote \(path)")
    }
}
if check {
    if stale.isEmpty {
        print("af-docs: man page and completions match the option table")
    } else {
        print("af-docs: out of date: \(stale.joined(separator: ", ")); run: swift run af-docs")
        exit(1)
    }
}
