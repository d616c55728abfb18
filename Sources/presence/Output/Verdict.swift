import PresenceStore
import PresenceWire

/// One line a person can act on.
enum Verdict {
    static func make(_ reports: [ReplayReport]) -> String {
        guard let referenceKind = MemoryStorageRegistry.reference,
            let reference = reports.first(where: { $0.storage == referenceKind.name })
        else { return "no non-evicting storage run to compare with" }
        let losers = reports.filter { $0.lost + $0.stale > 0 }
        let size = Format.bytes(reference.storageEstimatedBytes)
        if reference.users == 0 { return "no presence updates: nothing to compare" }
        if losers.isEmpty {
            return
                "no storage lost a status here; keep the \(reference.storage) (\(size) for \(Format.count(reference.users)) users): "
                + "an evicting cache saves nothing until its limits or memory pressure bite"
        }
        let damage = losers.map {
            "\($0.storage) lost \(Format.count($0.lost)) (\(Format.percent($0.lossRate)))"
                + ($0.stale > 0 ? " and showed \(Format.count($0.stale)) stale" : "")
        }.joined(separator: ", ")
        let overBudget = reference.pressureEvents.contains { $0.overBudget }
        if overBudget {
            return
                "\(damage); the \(reference.storage) kept all \(Format.count(reference.users)) users but went over the memory budget "
                + "(\(size)): raise the budget, or accept those losses and show them as unknown"
        }
        return
            "\(damage) of \(Format.count(reference.users)) users; the \(reference.storage) kept every status in \(size): use the \(reference.storage)"
    }
}
