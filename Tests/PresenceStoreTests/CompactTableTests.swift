import PresenceTestSupport
import PresenceWorkload
import Testing

@testable import PresenceStore

@Suite("The compact table behaves like a dictionary")
struct CompactTableTests {
    @Test func randomInsertsReplacesAndRemovesMatchADictionaryModel() {
        let table = CompactPresenceTable()
        var model: [BareJID: UserPresence] = [:]
        var random = SplitMix64(seed: 11)
        let keys = (0 ..< 600).map { jid("user\($0)@dept\($0 % 7).example.com") }
        for step in 0 ..< 20_000 {
            let key = keys[random.below(keys.count)]
            var raw = key.rawValue
            raw.withUTF8 { utf8 in
                let bytes = UnsafeRawBufferPointer(utf8)
                let hash = CompactPresenceTable.hash(bytes)
                let record = table.find(bytes, hash: hash)
                #expect((record != nil) == (model[key] != nil))
                switch random.below(3) {
                case 0:
                    if let record {
                        table.remove(record, hash: hash)
                        model[key] = nil
                    }
                default:
                    var value = model[key] ?? UserPresence()
                    value.apply(
                        available(
                            "\(key.rawValue)/r\(random.below(4))", priority: Int8(random.below(20)),
                            status: random.chance(0.5) ? "status \(step)" : nil), receivedAt: time(Int64(step)))
                    if let record {
                        table.replace(record, hash: hash, with: value)
                    } else {
                        table.insert(bytes, hash: hash, value: value)
                    }
                    model[key] = value
                }
            }
        }
        #expect(table.count == model.count)
        for (key, value) in model {
            var raw = key.rawValue
            let stored = raw.withUTF8 { utf8 -> UserPresence? in
                let bytes = UnsafeRawBufferPointer(utf8)
                return table.find(bytes, hash: CompactPresenceTable.hash(bytes)).map { table.value(of: $0) }
            }
            #expect(stored == value)
        }
        var seen = Set<BareJID>()
        table.forEachKey { seen.insert($0) }
        #expect(seen == Set(model.keys))
    }

    @Test func roomReservedBeforeAndAfterFillingKeepsEveryUserFindableAndTheTableNoBigger() {
        let keys = (0 ..< 5_000).map { jid("user\($0)@example.com") }
        let values = keys.enumerated().map { user(available("\($1.rawValue)/desk", status: "n=\($0)")) }
        func filled(reservingFirst: Int?) -> CompactPresenceTable {
            let table = CompactPresenceTable()
            if let reservingFirst { table.reserveCapacity(reservingFirst) }
            for (index, key) in keys.enumerated() {
                var raw = key.rawValue
                raw.withUTF8 { utf8 in
                    let bytes = UnsafeRawBufferPointer(utf8)
                    table.insert(bytes, hash: CompactPresenceTable.hash(bytes), value: values[index])
                }
            }
            return table
        }
        let grown = filled(reservingFirst: nil)
        let reserved = filled(reservingFirst: keys.count)
        #expect(reserved.estimatedBytes == grown.estimatedBytes, "reserving for what comes sizes the table as growing would")
        reserved.reserveCapacity(keys.count * 3)  // a table already holding users moves them
        reserved.reserveCapacity(10)  // never shrinks
        for (index, key) in keys.enumerated() {
            var raw = key.rawValue
            let stored = raw.withUTF8 { utf8 -> UserPresence? in
                let bytes = UnsafeRawBufferPointer(utf8)
                return reserved.find(bytes, hash: CompactPresenceTable.hash(bytes)).map { reserved.value(of: $0) }
            }
            #expect(stored == values[index])
        }
        #expect(reserved.count == keys.count)
    }

    @Test func aCompactUserCostsFarLessThanADictionaryEntry() {
        let table = CompactPresenceTable()
        let value = user(
            available("alice.smith12345@engineering.example.com/desk", priority: 10, status: "In a meeting"),
            available("alice.smith12345@engineering.example.com/phone", show: .away))
        for index in 0 ..< 10_000 {
            var raw = "alice.smith\(index)@engineering.example.com"
            raw.withUTF8 { utf8 in
                let bytes = UnsafeRawBufferPointer(utf8)
                table.insert(bytes, hash: CompactPresenceTable.hash(bytes), value: value)
            }
        }
        // Key (~37 bytes) + two resources with a status, plus table overhead: well under 150 bytes a user.
        #expect(table.estimatedBytes / 10_000 < 150)
    }
}
