/// af's version.
public enum AFVersion {
    /// The version `--version` prints and `User-Agent` carries.
    public static let current = "0.1.0"
}
