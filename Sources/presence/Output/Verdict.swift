import PresenceStore
import PresenceWire

/// One line a person can act on.
enum Verdict {
    static func make(_ reports: [ReplayReport]) -> String {
        let memoryOnly = reports.filter { $0.disk == nil }
        return verdict(memoryOnly.isEmpty ? reports : memoryOnly) + diskTierClause(reports)
    }

    /// What the best storage with a disk tier offers instead: nothing lost, for its memory, disk reads and file.
    private static func diskTierClause(_ reports: [ReplayReport]) -> String {
        let whole = reports.filter { $0.disk != nil && $0.lost + $0.stale == 0 && $0.storage != "disk" }
        guard let best = whole.min(by: { $0.storageEstimatedBytes < $1.storageEstimatedBytes }), let disk = best.disk
        else { return "" }
        return "; or \(best.storage): nothing lost, \(Format.bytes(best.storageEstimatedBytes)) in memory, "
            + "\(Format.count(disk.diskReads)) disk reads to read every user once, \(Format.bytes(disk.fileBytes)) on disk"
    }

    private static func verdict(_ reports: [ReplayReport]) -> String {
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
