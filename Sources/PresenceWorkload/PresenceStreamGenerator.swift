import PresenceModel

/// Generates a deterministic, realistic stream of XMPP presence traffic for an office: the same parameters
/// give the same bytes.
///
/// What it models: departments; skewed activity (a few people change status all day, most rarely); several
/// devices per person with different priorities; people going offline device by device; subscription and
/// probe noise; messages and IQs mixed in; delayed (XEP-0203) presences; attendance changes; `<status>` texts
/// in more than one language.
public struct PresenceStreamGenerator: Sendable {
    public struct Parameters: Hashable, Sendable {
        public var users: Int
        public var updates: Int
        public var maxResources: Int
        public var seed: UInt64
        /// When the generated day starts.
        public var start: PresenceTime
        /// The mean time between two stanzas, in milliseconds (delay stamps and `since` times follow it).
        public var meanIntervalMilliseconds: Int

        public init(
            users: Int, updates: Int, maxResources: Int = 3, seed: UInt64 = 1,
            start: PresenceTime = PresenceTime(xmppTimestamp: "2026-11-23T07:30:00Z")!,
            meanIntervalMilliseconds: Int = 200
        ) {
            self.users = max(users, 1)
            self.updates = max(updates, 0)
            self.maxResources = max(maxResources, 1)
            self.seed = seed
            self.start = start
            self.meanIntervalMilliseconds = max(meanIntervalMilliseconds, 1)
        }
    }

    public let parameters: Parameters
    public let directory: Directory
    private var random: SplitMix64
    private var online: [[Bool]]
    private var clock: PresenceTime
    private var emitted = 0

    static let statusTexts = [
        "In a meeting", "Lunch", "Working from home", "Focus time, ping if urgent", "On a call", "Back in 5",
        "Travelling", "At the client site", "Out sick", "Commuting", "Reviewing budgets", "Interviewing",
    ]
    static let germanStatusTexts = ["In einer Besprechung", "Mittagspause", "Im Homeoffice", "Unterwegs"]
    static let shows: [PresenceShow?] = [nil, nil, nil, .away, .away, .xa, .dnd, .chat]

    public init(_ parameters: Parameters) {
        self.parameters = parameters
        var random = SplitMix64(seed: parameters.seed)
        directory = Directory(users: parameters.users, maxResources: parameters.maxResources, random: &random)
        self.random = random
        online = directory.people.map { [Bool](repeating: false, count: $0.devices.count) }
        clock = parameters.start
    }

    /// The stream header that opens a generated stream.
    public static let header =
        "<?xml version='1.0'?>\n<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='example.com' version='1.0' xml:lang='en'>\n"
    public static let footer = "</stream:stream>\n"

    /// Appends the next stanza (and a newline) to `output`; false once `updates` presence updates were written.
    public mutating func next(into output: inout [UInt8]) -> Bool {
        guard emitted < parameters.updates else { return false }
        clock.millisecondsSinceEpoch += Int64(1 + random.below(2 * parameters.meanIntervalMilliseconds))
        let roll = random.unit()
        if roll < 0.02 {
            appendSubscriptionNoise(into: &output)
        } else if roll < 0.04 {
            appendMessageOrIQ(into: &output)
        } else {
            appendPresence(into: &output)
            emitted += 1
        }
        output.append(UInt8(ascii: "\n"))
        return true
    }

    /// The whole stream: header, stanzas, footer.
    public mutating func generate() -> [UInt8] {
        var output = Array(PresenceStreamGenerator.header.utf8)
        output.reserveCapacity(parameters.updates * 220)
        while next(into: &output) {}
        output.append(contentsOf: PresenceStreamGenerator.footer.utf8)
        return output
    }

    /// A person, chosen with heavy skew: the lowest indices are the busiest (roughly Zipf-like).
    private mutating func activePerson() -> Int {
        let u = random.unit()
        return min(Int(Double(directory.people.count) * u * u * u), directory.people.count - 1)
    }

    private mutating func appendPresence(into output: inout [UInt8]) {
        let personIndex = activePerson()
        let person = directory.people[personIndex]
        let deviceIndex = random.below(person.devices.count)
        let device = person.devices[deviceIndex]
        let goingOffline = online[personIndex][deviceIndex] && random.chance(0.15)
        online[personIndex][deviceIndex] = !goingOffline
        let jid = person.jid + "/" + device.resource

        output.append(contentsOf: "<presence from='\(jid)'".utf8)
        if goingOffline { output.append(contentsOf: " type='unavailable'".utf8) }
        output.append(contentsOf: ">".utf8)
        if !goingOffline, let show = random.pick(PresenceStreamGenerator.shows) {
            output.append(contentsOf: "<show>\(show.rawValue)</show>".utf8)
        }
        if random.chance(goingOffline ? 0.3 : 0.6) {
            let status = goingOffline ? "Gone home" : random.pick(PresenceStreamGenerator.statusTexts)
            output.append(contentsOf: "<status>\(status)</status>".utf8)
            if random.chance(0.1) {
                output.append(
                    contentsOf:
                        "<status xml:lang='de'>\(random.pick(PresenceStreamGenerator.germanStatusTexts))</status>".utf8)
            }
        }
        if !goingOffline {
            output.append(contentsOf: "<priority>\(device.priority)</priority>".utf8)
        }
        if random.chance(0.12) {
            let state = random.pick(Attendance.allCases)
            output.append(
                contentsOf: "<attendance xmlns='urn:presence-store:attendance' state='\(state.rawValue)'/>".utf8)
        }
        if random.chance(0.03) {
            let delayed = PresenceTime(
                millisecondsSinceEpoch: clock.millisecondsSinceEpoch - Int64(1000 + random.below(600_000)) / 1000 * 1000
            )
            output.append(contentsOf: "<delay xmlns='urn:xmpp:delay' from='example.com' stamp='\(delayed)'/>".utf8)
        }
        output.append(contentsOf: "</presence>".utf8)
    }

    private mutating func appendSubscriptionNoise(into output: inout [UInt8]) {
        let from = directory.people[activePerson()].jid
        let to = directory.people[random.below(directory.people.count)].jid
        let type = random.pick(["subscribe", "subscribed", "unsubscribe", "unsubscribed", "probe"])
        output.append(contentsOf: "<presence from='\(from)' to='\(to)' type='\(type)'/>".utf8)
    }

    private mutating func appendMessageOrIQ(into output: inout [UInt8]) {
        let from = directory.people[activePerson()].jid
        let to = directory.people[random.below(directory.people.count)].jid
        if random.chance(0.5) {
            output.append(
                contentsOf: "<message from='\(from)/desk' to='\(to)' type='chat'><body>Got a minute?</body></message>"
                    .utf8)
        } else {
            output.append(
                contentsOf:
                    "<iq from='\(from)/phone' type='get' id='r\(emitted)'><query xmlns='jabber:iq:roster'/></iq>".utf8)
        }
    }
}
