/// Values that copies share until one of them changes (copy on write).
///
/// The engine's descriptions (a request, its transfer options, an attempt, a response head)
/// are handed on many times per request: into the request's state, each attempt, the
/// transfer, the response and the printers. As plain structs each copy retained every
/// string, array and nested value they hold one by one; behind this box a copy is one
/// reference count. The types keep value semantics: their accessors read `values` in place
/// and write through its modify accessor, which copies a storage another copy shares.
///
/// The command line keeps a twin of its own (`AFCommandLine/Options/CopyOnWrite.swift`):
/// shared across the module boundary, as an inlinable package type, its read accessor was
/// not inlined into the command line's settings and cost a batch about 3,500 instructions
/// a request more (callgrind, 1,000-line run minus 500-line run).
struct CopyOnWrite<Values: Sendable>: Sendable {
    /// Changed in place only while one copy holds it, so no two accesses to it overlap and
    /// the runtime's dynamic exclusivity check (a call per access) is left out.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var values: Values

        init(_ values: Values) {
            self.values = values
        }
    }

    private var storage: Storage

    init(_ values: Values) {
        storage = Storage(values)
    }

    /// The values, read in place (a getter would copy all of them for each field read); a
    /// change first copies a storage another copy shares.
    var values: Values {
        _read { yield storage.values }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.values) }
            yield &storage.values
        }
    }

    /// Whether the two are copies of one another that neither has changed since.
    func isUnchangedCopy(of other: CopyOnWrite) -> Bool {
        storage === other.storage
    }
}
