import FuzzSupport
import PresenceModel

/// JID parsing never crashes, and normalisation is stable: a JID that parses prints as text that parses to the
/// same JID, and its bare JID parses as a `BareJID` equal to it.
func fuzzJID(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count), as: UTF8.self)
    guard let jid = try? JID(text) else {
        _ = try? BareJID(text)
        return 0
    }
    guard let again = try? JID(jid.description) else {
        preconditionFailure("\(jid) printed as text that does not parse")
    }
    precondition(again == jid, "normalisation is stable: \(jid) → \(again)")
    precondition((try? BareJID(jid.bare.rawValue)) == jid.bare, "the bare JID \(jid.bare) parses as itself")
    return 0
}

runLibFuzzer { data, size in fuzzJID(data, Int(size)) }
