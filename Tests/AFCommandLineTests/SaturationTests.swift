@testable import AFCommandLine
import Testing

/// Numbers computed from the network (speeds, estimates) never trap when they blow up.
@Suite struct SaturationTests {
    @Test func progressEstimatesSaturate() {
        #expect(ProgressBar.clock(.infinity) == "99:59:59")
        #expect(ProgressBar.clock(1e300) == "99:59:59")
        #expect(ProgressBar.clock(.nan) == "0:00")
        #expect(ProgressBar.clock(61) == "1:01")
    }
}
