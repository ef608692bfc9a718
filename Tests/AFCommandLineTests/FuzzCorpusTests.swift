import AFCommandLine
import Foundation
import Testing

/// Replays every committed fuzz corpus (Fuzz/corpus/TARGET/*) through its target, so a crash
/// that fuzzing once found stays fixed. `Fuzz/run.sh` does the fuzzing itself.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus").path

    @Test func everyTargetHasASeedCorpus() throws {
        let directories = Set(try FileManager.default.contentsOfDirectory(atPath: Self.corpus))
        #expect(directories == Set(FuzzTargets.all.map(\.name)))
        for name in directories {
            #expect(!(try FileManager.default.contentsOfDirectory(atPath: Self.corpus + "/" + name)).isEmpty, "\(name) has no seeds")
        }
    }

    @Test(arguments: FuzzTargets.all.map(\.name))
    func corpusReplays(target name: String) throws {
        let run = try #require(FuzzTargets.target(named: name))
        let directory = Self.corpus + "/" + name
        for file in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() {
            let data = try #require(FileManager.default.contents(atPath: directory + "/" + file), "\(file)")
            run(Array(data))
        }
    }
}
