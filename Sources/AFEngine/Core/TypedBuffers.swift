extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for bodies with a typed error (the standard one loses the type).
    @inlinable package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in Result { () throws(E) -> R in try body(raw) } }
        return try result.get()
    }

    /// `withUnsafeMutableBytes` for bodies with a typed error.
    package mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeMutableBytes { raw in Result { () throws(E) -> R in try body(raw) } }
        return try result.get()
    }
}
