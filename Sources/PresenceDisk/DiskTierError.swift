/// Why a disk tier cannot open or write its file: each names the file and says what to do.
public enum DiskTierError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The data directory or its file cannot be created or written.
    case notWritable(path: String, reason: String)
    /// Another process has the data directory open.
    case inUse(directory: String, pid: Int32?)
    /// The file is not an SQLite database (truncated before its header, or something else).
    case notADatabase(path: String)
    /// An SQLite database, but not a PresenceStore disk tier.
    case foreign(path: String)
    /// A disk tier of another format version.
    case schemaVersion(path: String, found: Int64, expected: Int64)
    /// A disk tier written on a machine of the other byte order.
    case byteOrder(path: String, found: String)
    /// SQLite found the file damaged, or a record in it is not one this program wrote.
    case corrupt(path: String, detail: String)
    /// The disk (or the process's file size limit) is full.
    case full(path: String, detail: String)
    /// Any other error SQLite reported.
    case io(path: String, detail: String)
    /// The store was closed.
    case closed(path: String)

    /// The flag that sets an unreadable file aside and starts an empty tier.
    public static let resetFlag = "--disk-reset"

    public var description: String {
        let setAside =
            "start with \(Self.resetFlag) to set it aside and begin with an empty disk tier, or point --data-dir elsewhere"
        switch self {
        case .notWritable(let path, let reason):
            return "\(path): cannot be written (\(reason)); make it writable by this user or choose another --data-dir"
        case .inUse(let directory, let pid):
            return "\(directory) is in use by another presence process\(pid.map { " (pid \($0))" } ?? ""); "
                + "give each process its own --data-dir"
        case .notADatabase(let path):
            return "\(path): not a PresenceStore disk tier (not an SQLite database, or cut short); \(setAside)"
        case .foreign(let path):
            return "\(path): an SQLite database, but not a PresenceStore disk tier; \(setAside)"
        case .schemaVersion(let path, let found, let expected):
            return "\(path): disk tier format \(found), this program reads format \(expected); \(setAside)"
        case .byteOrder(let path, let found):
            return "\(path): written on a \(found)-endian machine; \(setAside)"
        case .corrupt(let path, let detail):
            return "\(path): damaged (\(detail)); \(setAside)"
        case .full(let path, let detail):
            return "\(path): the disk is full (\(detail)); statuses stay in memory and are written once there is room"
        case .io(let path, let detail):
            return "\(path): \(detail)"
        case .closed(let path):
            return "\(path): the disk tier is closed"
        }
    }
}
