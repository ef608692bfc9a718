import AFTestSupport
import Testing

/// A run that failed the way af must fail: exit `status`, a message containing `text`, and
/// exactly one `af: error:` line, the last on standard error. For both the in-process and
/// the real-binary suites.
public func expectOneError(_ result: AFResult, status: Int32, containing text: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == status, "\(result.err)", sourceLocation: sourceLocation)
    #expect(result.err.contains(text), "\(result.err)", sourceLocation: sourceLocation)
    #expect(result.endsWithOneErrorLine, "\(result.err)", sourceLocation: sourceLocation)
}
