import PresenceModel

/// Reads through the tiers: memory first, then the write-behind buffer, then the disk (through the buffer's filter
/// of users on disk); a disk hit goes back into memory unless the user was written since the read.
extension TieredStorage {
    public func lookup(_ key: BareJID) -> StoredPresence { tieredLookup(key).stored }

    /// The user's value and the tier that answered: `.memory` (the memory storage or the write-behind buffer),
    /// `.disk`, or nil when neither holds them.
    public func tieredLookup(_ key: BareJID) -> (stored: StoredPresence, tier: StorageTier?) {
        var inMemory = StoredPresence.unknown
        if let memory {
            inMemory = memory.lookup(key)
            if case .present = inMemory {
                counters.memoryHits.add(1, ordering: .relaxed)
                return (inMemory, .memory)
            }
        }
        return beyondMemory(key, memoryAnswer: inMemory)
    }

    public func withShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R {
        var inMemory = StoredPresence.unknown
        if let memory {
            let hit: ShownOrMiss<R> = memory.withShownPresence(key) { stored in
                switch stored {
                case .present: .hit(body(stored))
                case .lost(let cause): .miss(.lost(cause))
                case .unknown: .miss(.unknown)
                }
            }
            switch hit {
            case .hit(let result):
                counters.memoryHits.add(1, ordering: .relaxed)
                return result
            case .miss(let answer): inMemory = answer
            }
        }
        switch beyondMemory(key, memoryAnswer: inMemory).stored {
        case .present(let presence): return ShownPresence.withShown(presence.status) { body(.present($0)) }
        case .lost(let cause): return body(.lost(cause))
        case .unknown: return body(.unknown)
        }
    }

    /// Calls `body` with the memory tier's answer for a user it holds who was not restored (or confirmed since),
    /// and returns its result; nil, without calling `body`, otherwise.
    public func withPlainShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R? {
        guard let memory else { return nil }
        if restoredAsOf(key) != nil { return nil }
        let result: R? = memory.withShownPresence(key) { stored in
            if case .present = stored { body(stored) } else { nil }
        }
        if result != nil { counters.memoryHits.add(1, ordering: .relaxed) }
        return result
    }

    private enum ShownOrMiss<R> {
        case hit(R)
        case miss(StoredPresence)
    }

    /// Where a user missing from memory is: the buffer, maybe the disk, or nowhere.
    private enum Beyond {
        case buffered(UserPresence?)
        case nowhere
        case maybeOnDisk(epoch: Int)
    }

    private func whereBeyondMemory(_ key: BareJID) -> Beyond {
        state.withLock { state in
            if let buffered = state.buffered(key) { return .buffered(buffered) }
            if state.clearPending || !state.filter.mayContain(key) { return .nowhere }
            return .maybeOnDisk(epoch: state.flushEpoch)
        }
    }

    private func beyondMemory(_ key: BareJID, memoryAnswer: StoredPresence) -> (stored: StoredPresence, tier: StorageTier?) {
        if memoryKeepsEveryone {
            counters.misses.add(1, ordering: .relaxed)
            return (memoryAnswer, nil)
        }
        switch whereBeyondMemory(key) {
        case .buffered(let value?):
            counters.memoryHits.add(1, ordering: .relaxed)
            return (.present(value), .memory)
        case .buffered(nil):
            return (.unknown, nil)
        case .nowhere:
            counters.misses.add(1, ordering: .relaxed)
            return (memoryAnswer, nil)
        case .maybeOnDisk(let epoch):
            guard let value = readDisk(key) else {
                counters.misses.add(1, ordering: .relaxed)
                return (memoryAnswer, nil)
            }
            counters.diskHits.add(1, ordering: .relaxed)
            promote(key, value, readAt: epoch)
            return (.present(value), .disk)
        }
    }

    private func readDisk(_ key: BareJID) -> UserPresence? {
        counters.diskReads.add(1, ordering: .relaxed)
        do {
            return try disk.read(key)
        } catch {
            counters.diskReadErrors.add(1, ordering: .relaxed)
            state.withLock { $0.lastError = "\(error)" }
            return nil
        }
    }

    /// Puts a disk hit back in memory, unless the user was written since the read (then memory or the buffer
    /// has the newer value, or a flush moved it to disk after the read).
    private func promote(_ key: BareJID, _ value: UserPresence, readAt epoch: Int) {
        guard let memory else { return }
        memory.update(key) { stored in
            guard stored == nil else { return }
            let unchanged = state.withLock { $0.buffered(key) == nil && $0.flushEpoch == epoch && !$0.clearPending }
            if unchanged { stored = value }
        }
    }

    /// The user's value outside memory, read under the caller's write order for the user.
    func valueBeyondMemory(_ key: BareJID) -> UserPresence? {
        switch whereBeyondMemory(key) {
        case .buffered(let value): value
        case .nowhere: nil
        case .maybeOnDisk: readDisk(key)
        }
    }
}
