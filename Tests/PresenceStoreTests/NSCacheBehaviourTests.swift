import Foundation
import Testing

/// What Foundation's NSCache really does on Linux (swift-corelibs-foundation), pinned by tests so that the
/// README's claims stay true on the toolchain in use.
@Suite("NSCache on Linux, as it really behaves")
struct NSCacheBehaviourTests {
    final class Value {
        let name: String
        init(_ name: String) { self.name = name }
    }

    final class Recorder: NSObject, NSCacheDelegate, @unchecked Sendable {
        // @unchecked: only used from the test's thread.
        var evicted: [String] = []
        func cache(_ cache: NSCache<AnyObject, AnyObject>, willEvictObject object: Any) {
            if let value = object as? Value { evicted.append(value.name) }
        }
    }

    func contents(_ cache: NSCache<NSString, Value>, _ names: [String]) -> [String] {
        names.filter { cache.object(forKey: $0 as NSString) != nil }
    }

    @Test func atEqualCostTheNewestEntryIsEvicted() {
        let cache = NSCache<NSString, Value>()
        defer { cache.removeAllObjects() }  // or its entries leak (below)
        cache.countLimit = 3
        for name in ["a", "b", "c", "d"] { cache.setObject(Value(name), forKey: name as NSString) }
        #expect(contents(cache, ["a", "b", "c", "d"]) == ["a", "b", "c"])
    }

    @Test func theCheapestEntryGoesFirstAndReadsDoNotProtectAnything() {
        let cache = NSCache<NSString, Value>()
        defer { cache.removeAllObjects() }  // or its entries leak (below)
        cache.totalCostLimit = 10
        cache.setObject(Value("a"), forKey: "a", cost: 5)
        cache.setObject(Value("b"), forKey: "b", cost: 1)
        for _ in 0 ..< 10 { _ = cache.object(forKey: "b") }
        cache.setObject(Value("c"), forKey: "c", cost: 3)
        cache.setObject(Value("d"), forKey: "d", cost: 4)
        // 13 > 10: b (1) then c (3) go, cheapest first, although b was just read: more than needed is evicted.
        #expect(contents(cache, ["a", "b", "c", "d"]) == ["a", "d"])
    }

    @Test func lowerLimitsEvictNothingUntilTheNextSet() {
        let cache = NSCache<NSString, Value>()
        defer { cache.removeAllObjects() }  // or its entries leak (below)
        for name in ["a", "b", "c", "d", "e"] { cache.setObject(Value(name), forKey: name as NSString) }
        cache.countLimit = 2
        #expect(contents(cache, ["a", "b", "c", "d", "e"]).count == 5)
        cache.setObject(Value("a"), forKey: "a")
        #expect(contents(cache, ["a", "b", "c", "d", "e"]).count == 2)
    }

    @Test func theDelegateHearsOfEvictionsInsideSetObjectOnly() {
        let cache = NSCache<NSString, Value>()
        let recorder = Recorder()
        cache.delegate = recorder
        cache.countLimit = 2
        for name in ["a", "b", "c"] { cache.setObject(Value(name), forKey: name as NSString) }
        #expect(recorder.evicted == ["c"])
        cache.setObject(Value("a2"), forKey: "a")  // replacing: not reported
        cache.removeObject(forKey: "b")  // removing: not reported
        cache.removeAllObjects()  // clearing: not reported
        #expect(recorder.evicted == ["c"])
    }

    /// Its entries link to their neighbours strongly both ways, so a cache freed with two or more entries in it
    /// leaks them, values included; `removeAllObjects` unlinks them. `NSCacheMemoryStorage` empties its cache when
    /// it is freed for this reason. (This test leaks two entries on purpose: LeakSanitizer reports them.)
    @Test func aCacheFreedWithEntriesInItNeverFreesThemUnlessEmptiedFirst() {
        weak var leaked: Value?
        weak var freed: Value?
        do {
            let cache = NSCache<NSString, Value>()
            let values = [Value("a"), Value("b")]
            for value in values { cache.setObject(value, forKey: value.name as NSString) }
            leaked = values[0]
        }
        do {
            let cache = NSCache<NSString, Value>()
            let values = [Value("a"), Value("b")]
            for value in values { cache.setObject(value, forKey: value.name as NSString) }
            freed = values[0]
            cache.removeAllObjects()
        }
        #expect(leaked != nil)
        #expect(freed == nil)
    }
}
