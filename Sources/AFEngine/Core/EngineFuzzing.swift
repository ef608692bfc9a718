/// Entry points into engine parsers that are not public, for the fuzz targets
/// (`FuzzTargets` in the command line). Each must return without trapping for any input.
package enum EngineFuzzing {
    /// Feeds `data`, split into lines, to a response head parser with a limit taken from the
    /// first byte (0 means none).
    package static func responseHead(_ data: [UInt8]) {
        var parser = ResponseHeadParser()
        parser.maxHeaders = data.first.map { Int($0) } ?? 100
        var start = data.isEmpty ? 0 : 1
        var index = start
        while index <= data.count {
            if index == data.count || data[index] == 10 {
                let end = min(index + 1, data.count)
                let line = Array(data[start..<end])
                let step = line.withUnsafeBytes { parser.consume($0) }
                switch step {
                case .failure: return
                case .complete(let head):
                    precondition(head.informational.count <= ResponseHead.keptInformational, "at most keptInformational interim heads")
                    precondition(head.informational.allSatisfy { (100..<200).contains($0.status) && $0.status != 101 }, "only 1xx heads are informational")
                case .informational(let head):
                    precondition((100..<200).contains(head.status) && head.status != 101, "only 1xx heads are informational")
                case .needMore: break
                }
                start = end
            }
            index += 1
        }
    }
}
