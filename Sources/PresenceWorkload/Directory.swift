/// A synthetic company: people with names, departments and devices, the population a generated stream is about.
public struct Directory: Sendable {
    public struct Person: Sendable {
        public var jid: String
        public var department: String
        /// The person's devices as (resource, priority), the desk client first.
        public var devices: [(resource: String, priority: Int)]
    }

    public static let departments = [
        "engineering", "sales", "support", "finance", "marketing", "legal", "operations", "people",
    ]
    static let firstNames = [
        "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj",
        "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yuki", "zoe", "amir", "bea", "chen",
        "dara", "emil", "fatima", "goran", "hana", "ines", "jonas", "kemal", "lena", "marta", "noor", "oskar",
    ]
    static let lastNames = [
        "smith", "jones", "garcia", "muller", "rossi", "tanaka", "kim", "nowak", "silva", "dubois", "jensen",
        "ivanova", "okafor", "haddad", "larsen", "novak", "costa", "weber", "sato", "park", "fischer", "moreau",
    ]
    static let deviceKinds: [(resource: String, priority: Int)] = [
        ("desk", 10), ("laptop", 5), ("phone", 0), ("tablet", -1),
    ]

    public let people: [Person]

    /// `users` people, each with 1 to `maxResources` devices, deterministically from `random`.
    public init(users: Int, maxResources: Int, random: inout SplitMix64) {
        var people: [Person] = []
        people.reserveCapacity(users)
        for index in 0 ..< users {
            let first = random.pick(Directory.firstNames)
            let last = random.pick(Directory.lastNames)
            let department = Directory.departments[index % Directory.departments.count]
            // About one person in eight has a single device; most have a desk client and a phone.
            let deviceCount = 1 + random.below(max(maxResources, 1))
            var devices: [(String, Int)] = []
            for device in 0 ..< deviceCount {
                let kind = Directory.deviceKinds[device % Directory.deviceKinds.count]
                let suffix = device < Directory.deviceKinds.count ? "" : "\(device)"
                devices.append((kind.resource + suffix, kind.priority))
            }
            people.append(
                Person(
                    jid: "\(first).\(last)\(index)@\(department).example.com", department: department, devices: devices)
            )
        }
        self.people = people
    }
}
