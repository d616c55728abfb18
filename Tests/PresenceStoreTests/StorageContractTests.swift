import PresenceStore
import PresenceTestSupport
import Testing

@Suite("Every registered storage keeps the MemoryStorage contract")
struct StorageContractTests {
    @Test(arguments: MemoryStorageRegistry.kinds)
    func keepsTheMemoryStorageContract(kind: MemoryStorageKind) async throws {
        try await checkMemoryStorageContract(kind)
    }

    @Test func everyKindHasAUniqueNameAndMakesStoragesOfThatName() throws {
        let names = MemoryStorageRegistry.kinds.map(\.name)
        #expect(Set(names).count == names.count)
        for kind in MemoryStorageRegistry.kinds {
            #expect(MemoryStorageRegistry.kind(named: kind.name) == kind)
            #expect(try kind.make().name == kind.name)
        }
        #expect(MemoryStorageRegistry.reference == .dictionary, "the non-evicting reference the verdict compares with")
    }

    @Test func limitsAStorageDoesNotHaveAreNamed() {
        let configuration = StorageConfiguration(countLimit: 10, timeToLive: .seconds(5))
        #expect(MemoryStorageKind.dictionary.limitsNotApplicable(in: configuration) == [.countLimit, .timeToLive])
        #expect(MemoryStorageKind.nscache.limitsNotApplicable(in: configuration) == [.timeToLive])
        #expect(MemoryStorageKind.lru.limitsNotApplicable(in: configuration).isEmpty)
    }
}
