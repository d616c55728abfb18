import PresencePressure
import PresenceStore
import Testing

@Suite("Pressure sources")
struct PressureSourceTests {
    @Test func scriptedPressureFiresAtItsPoints() {
        let every = ScriptedPressure(.every(updates: 100, level: .warning))
        #expect(every.check(.appliedUpdates(0)) == nil)
        #expect(every.check(.appliedUpdates(99)) == nil)
        #expect(every.check(.appliedUpdates(100)) == .warning)
        #expect(every.check(.appliedUpdates(300)) == .warning)
        #expect(every.check(.timer) == nil, "a timer never triggers a script")
        let points = ScriptedPressure(.at([5: .critical, 9: .warning]))
        #expect((0 ..< 12).compactMap { points.check(.appliedUpdates($0)) } == [.critical, .warning])
    }

    @Test func theResidentBudgetMapsResidentMemoryToLevels() throws {
        let budget = ResidentMemoryBudget(budgetBytes: 1000, warningFraction: 0.8)
        #expect(budget.level(forResidentBytes: 700) == nil)
        #expect(budget.level(forResidentBytes: 800) == .warning)
        #expect(budget.level(forResidentBytes: 1000) == .critical)
        let resident = try #require(ProcessMemory.residentBytes())
        #expect(resident > 1 << 20)
        #expect(try #require(ProcessMemory.peakResidentBytes()) >= resident / 2)
        // A budget far below what the test process uses is critical on the first check, on a timer always and
        // in a replay every `checkEvery` updates.
        let tiny = ResidentMemoryBudget(budgetBytes: 1 << 20, checkEvery: 10)
        #expect(tiny.check(.timer) == .critical)
        #expect(tiny.check(.appliedUpdates(9)) == nil)
        #expect(tiny.check(.appliedUpdates(10)) == .critical)
    }

    @Test func kernelPressureIsDetectedOrExplainedAndQuietWithoutPressure() {
        let (monitor, detection) = KernelMemoryPressure.start()
        if let monitor {
            #expect(!detection.sources.isEmpty)
            #expect(monitor.check(.timer) == nil, "no memory pressure while the tests run")
            monitor.stop()
        } else {
            #expect(!detection.unavailable.isEmpty, "a machine without PSI or cgroup v2 says why")
        }
    }
}
