extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for bodies that throw `AFError` (the standard one loses the type).
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(AFError) -> R) throws(AFError) -> R {
        let result: Result<R, AFError> = withUnsafeBytes { raw in Result { () throws(AFError) -> R in try body(raw) } }
        return try result.get()
    }

    /// `withUnsafeMutableBytes` for bodies that throw `AFError`.
    public mutating func withMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws(AFError) -> R) throws(AFError) -> R {
        let result: Result<R, AFError> = withUnsafeMutableBytes { raw in Result { () throws(AFError) -> R in try body(raw) } }
        return try result.get()
    }
}
