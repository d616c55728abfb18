import PresenceModel
import PresenceTestSupport
import Testing

@Suite("A user's status aggregates their resources (RFC 6121)")
struct AggregationTests {
    @Test func theHighestPriorityAvailableResourceRepresentsTheUser() {
        var user = UserPresence()
        user.apply(available("alice@example.com/desk", priority: 10, show: nil), receivedAt: time(1))
        user.apply(available("alice@example.com/phone", priority: 0, show: .away), receivedAt: time(2))
        #expect(user.status?.presence.resource == "desk")
        #expect(user.status?.isAvailable == true)
        user.apply(available("alice@example.com/phone", priority: 20, show: .dnd), receivedAt: time(3))
        #expect(user.status?.presence.resource == "phone")
        #expect(user.status?.presence.details.show == .dnd)
    }

    @Test func equalPrioritiesGoToTheMostRecentlyUpdatedResource() {
        var user = UserPresence()
        user.apply(available("alice@example.com/desk", priority: 5, status: "desk"), receivedAt: time(1))
        user.apply(available("alice@example.com/laptop", priority: 5, status: "laptop"), receivedAt: time(2))
        #expect(user.status?.presence.resource == "laptop")
        user.apply(available("alice@example.com/desk", priority: 5, status: "desk again"), receivedAt: time(3))
        #expect(user.status?.presence.details.status == "desk again")
    }

    @Test func equalTimestampsGoToTheLaterArrival() {
        var user = UserPresence()
        user.apply(available("alice@example.com/a", priority: 1), receivedAt: time(1))
        user.apply(available("alice@example.com/b", priority: 1), receivedAt: time(1))
        #expect(user.status?.presence.resource == "b")
        user.apply(available("alice@example.com/a", priority: 1), receivedAt: time(1))
        #expect(user.status?.presence.resource == "a")
    }

    @Test func aDelayedPresenceIsOlderThanAFreshOneOfEqualPriority() {
        var user = UserPresence()
        user.apply(available("alice@example.com/desk", priority: 1), receivedAt: time(100))
        user.apply(available("alice@example.com/phone", priority: 1, delayedAt: time(50)), receivedAt: time(101))
        #expect(user.status?.presence.resource == "desk")
        #expect(user.availableResources.first { $0.resource == "phone" }?.updatedAt == time(50))
    }

    @Test func negativePrioritiesStillCountAsAvailable() {
        var user = UserPresence()
        user.apply(available("alice@example.com/bot", priority: -5), receivedAt: time(1))
        #expect(user.status?.isAvailable == true)
        user.apply(available("alice@example.com/tablet", priority: -1), receivedAt: time(2))
        #expect(user.status?.presence.resource == "tablet")
    }

    @Test func anUnavailableResourceLeavesTheOthersOnline() {
        var user = UserPresence()
        user.apply(available("alice@example.com/desk", priority: 10), receivedAt: time(1))
        user.apply(available("alice@example.com/phone", priority: 0, show: .away), receivedAt: time(2))
        user.apply(unavailable("alice@example.com/desk"), receivedAt: time(3))
        #expect(user.status?.presence.resource == "phone")
        #expect(user.availableResources.count == 1)
    }

    @Test func whenTheLastResourceGoesTheUserIsOfflineWithTimeStatusAndAttendance() {
        var user = UserPresence()
        user.apply(available("alice@example.com/desk", priority: 10), receivedAt: time(1))
        user.apply(
            unavailable("alice@example.com/desk", status: "On vacation until Monday", attendance: .vacation),
            receivedAt: time(9))
        guard case .offline(let last)? = user.status else {
            Issue.record("expected offline, got \(String(describing: user.status))")
            return
        }
        #expect(last.updatedAt == time(9))
        #expect(last.details.status == "On vacation until Monday")
        #expect(last.details.attendance == .vacation)
        #expect(user.status?.since == time(9))
    }

    @Test func unavailableFromTheBareJIDTakesEveryResourceOffline() {
        var user = UserPresence()
        user.apply(available("alice@example.com/desk"), receivedAt: time(1))
        user.apply(available("alice@example.com/phone"), receivedAt: time(2))
        user.apply(unavailable("alice@example.com"), receivedAt: time(3))
        #expect(user.status?.isAvailable == false)
        #expect(user.availableResources.isEmpty)
    }

    @Test func unavailableForAnUnknownResourceDoesNotTouchTheOthers() {
        var user = UserPresence()
        user.apply(available("alice@example.com/desk", show: .dnd), receivedAt: time(1))
        user.apply(unavailable("alice@example.com/ghost"), receivedAt: time(2))
        #expect(user.status?.presence.details.show == .dnd)
    }

    @Test func aUserFirstSeenUnavailableIsOfflineNotUnknown() {
        let user = UserPresence(applying: unavailable("bob@example.com/phone"), receivedAt: time(5))
        #expect(user.status == .offline(lastPresence: user.lastUnavailable!))
        #expect(UserPresence().status == nil)
    }

    @Test func comingBackOnlineAfterOfflineIsAvailableAgain() {
        var user = UserPresence()
        user.apply(unavailable("alice@example.com/desk"), receivedAt: time(1))
        user.apply(available("alice@example.com/desk", show: .chat), receivedAt: time(2))
        #expect(user.status?.presence.details.show == .chat)
        #expect(user.status?.since == time(2))
    }

    @Test func aPresenceFromTheBareJIDIsTheEmptyResource() {
        var user = UserPresence()
        user.apply(available("alice@example.com", priority: 1), receivedAt: time(1))
        #expect(user.status?.presence.resource == "")
    }
}
