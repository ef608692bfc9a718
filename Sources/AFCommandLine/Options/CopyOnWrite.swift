/// Values that copies share until one of them changes (copy on write): for the value types a
/// request hands on several times (its settings, its environment), where copying one
/// reference costs far less than copying every string, array and table they hold. The engine
/// has a twin for its descriptions (`AFEngine/Support/CopyOnWrite.swift`, which says why the
/// two modules do not share one).
struct CopyOnWrite<Values: Sendable>: Sendable {
    /// Changed in place only while one copy holds it, so no two accesses to it overlap and
    /// the runtime's dynamic exclusivity check is left out.
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

    /// The values; a change first copies a storage another copy shares.
    var values: Values {
        get { storage.values }
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
