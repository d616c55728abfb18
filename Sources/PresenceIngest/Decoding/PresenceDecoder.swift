import PresenceModel
import XMPPStream

/// Turns stanzas into presence updates (RFC 6121 §4.7, XEP-0203), reading straight from the stanza's bytes.
///
/// - No `type`: available; `type='unavailable'`: that resource is gone. `subscribe`, `subscribed`,
///   `unsubscribe`, `unsubscribed`, `probe` and `error` never change a status and are ignored, as are
///   `<message>`, `<iq>` and other elements. An unknown `type` is rejected.
/// - `from` must be a valid JID; a missing or invalid one rejects the presence (counted, not a stream error).
/// - `<show>`: `chat`, `away`, `xa`, `dnd`; anything else is plain available.
/// - `<status>`: among several, the one in the stanza's language (its `xml:lang`, else the stream's), then the
///   one without a language, then the first.
/// - `<priority>`: an integer clamped to -128...127 (as Prosody does); absent or not an integer means 0.
/// - `<delay xmlns='urn:xmpp:delay' stamp='...'/>`: the update's time.
/// - `<attendance xmlns='urn:presence-store:attendance' state='...'/>`: the ``Attendance``.
public struct PresenceDecoder: Sendable {
    /// XEP-0203's delay, and XEP-0091's legacy one, which servers still send for offline storage.
    public static var delayNamespace: String { "urn:xmpp:delay" }
    public static var legacyDelayNamespace: String { "jabber:x:delay" }

    /// Statuses longer than this many UTF-8 bytes are cut at a character boundary: a status is one line for a
    /// UI, and the limit keeps one stanza from making a user cost a quarter of a megabyte in every storage.
    public var maximumStatusBytes: Int

    public static let defaultMaximumStatusBytes = 1024

    public init(maximumStatusBytes: Int = PresenceDecoder.defaultMaximumStatusBytes) {
        self.maximumStatusBytes = min(max(maximumStatusBytes, 0), PresenceDetails.maximumStatusBytes)
    }

    public func decode(_ stanza: Stanza) -> StanzaDisposition {
        let root = stanza.root
        let namespace = PresenceDecoder.contentNamespace(of: stanza)
        guard let namespace, stanza.isElement(root, named: "presence", in: namespace) else {
            if let namespace, stanza.isElement(root, named: "message", in: namespace) { return .ignored(.message) }
            if let namespace, stanza.isElement(root, named: "iq", in: namespace) { return .ignored(.iq) }
            return .ignored(.other)
        }
        let availability: PresenceUpdate.Availability
        switch PresenceDecoder.type(of: stanza) {
        case .success(let type): availability = type
        case .failure(let outcome): return outcome.disposition
        }
        let parsedFrom = stanza.withAttributeBytes("from" as StaticString, of: root) { bytes in
            Result { () throws(JIDError) in try JID(utf8: bytes) }
        }
        let from: JID
        switch parsedFrom {
        case nil: return .rejected(.missingFrom)
        case .failure(let error): return .rejected(.invalidFrom(error))
        case .success(let jid): from = jid
        }

        var details = PresenceDetails()
        var delayedAt: PresenceTime?
        var statusChoice = StatusChoice()
        for child in stanza.children(of: root) {
            if stanza.isElement(child, named: "show", in: namespace) {
                details.show = stanza.withTextBytes(of: child, PresenceDecoder.show)
            } else if stanza.isElement(child, named: "status", in: namespace) {
                statusChoice.consider(child, in: stanza)
            } else if stanza.isElement(child, named: "priority", in: namespace) {
                details.priority = stanza.withTextBytes(of: child, PresenceDecoder.priority)
            } else if stanza.isElement(child, named: "delay", in: Self.delayNamespace)
                || stanza.isElement(child, named: "x", in: Self.legacyDelayNamespace)
            {
                if delayedAt == nil {
                    delayedAt =
                        stanza.withAttributeBytes("stamp" as StaticString, of: child) {
                            PresenceTime(xmppTimestamp: $0)
                        } ?? nil
                }
            } else if stanza.isElement(child, named: "attendance", in: "urn:presence-store:attendance") {
                details.attendance =
                    stanza.withAttributeBytes("state" as StaticString, of: child) {
                        Attendance(rawValue: String(decoding: $0, as: UTF8.self))
                    } ?? nil
            }
        }
        if let chosen = statusChoice.chosen {
            details.status = stanza.withTextBytes(of: chosen) {
                PresenceDecoder.status($0, maximumBytes: maximumStatusBytes)
            }
        }
        return .update(PresenceUpdate(from: from, availability: availability, details: details, delayedAt: delayedAt))
    }

    /// The content namespace the root element is in, if it is one of the three XMPP content namespaces.
    private static func contentNamespace(of stanza: Stanza) -> StaticString? {
        // Literals, not the `XMPPNamespace` constants: this runs for every stanza and a `StaticString` compares
        // without touching a lazily initialised global. DecoderTests cover all three namespaces.
        if stanza.isElement(stanza.root, in: "jabber:client" as StaticString) { return "jabber:client" }
        if stanza.isElement(stanza.root, in: "jabber:server" as StaticString) { return "jabber:server" }
        if stanza.isElement(stanza.root, in: "jabber:component:accept" as StaticString) {
            return "jabber:component:accept"
        }
        return nil
    }

    private static func type(of stanza: Stanza) -> Result<PresenceUpdate.Availability, TypeOutcome> {
        let outcome: Result<PresenceUpdate.Availability, TypeOutcome>? = stanza.withAttributeBytes(
            "type" as StaticString, of: stanza.root
        ) { bytes in
            switch String(decoding: bytes, as: UTF8.self) {
            case "unavailable": .success(.unavailable)
            case "subscribe": .failure(TypeOutcome(.ignored(.subscribe)))
            case "subscribed": .failure(TypeOutcome(.ignored(.subscribed)))
            case "unsubscribe": .failure(TypeOutcome(.ignored(.unsubscribe)))
            case "unsubscribed": .failure(TypeOutcome(.ignored(.unsubscribed)))
            case "probe": .failure(TypeOutcome(.ignored(.probe)))
            case "error": .failure(TypeOutcome(.ignored(.error)))
            default: .failure(TypeOutcome(.rejected(.unknownType)))
            }
        }
        return outcome ?? .success(.available)
    }

    /// The status text, cut to at most `maximumBytes` without splitting a character.
    static func status(_ bytes: UnsafeBufferPointer<UInt8>, maximumBytes: Int) -> String {
        guard bytes.count > maximumBytes else { return String(decoding: bytes, as: UTF8.self) }
        var end = maximumBytes
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }  // back to the start of a character
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
    }

    static func show(_ bytes: UnsafeBufferPointer<UInt8>) -> PresenceShow? {
        let trimmed = trim(bytes)
        switch trimmed.count {
        case 2 where trimmed.elementsEqual("xa".utf8): return .xa
        case 3 where trimmed.elementsEqual("dnd".utf8): return .dnd
        case 4 where trimmed.elementsEqual("away".utf8): return .away
        case 4 where trimmed.elementsEqual("chat".utf8): return .chat
        default: return nil
        }
    }

    /// Parses a priority the way Prosody does: an integer, clamped to -128...127; anything else is 0.
    static func priority(_ bytes: UnsafeBufferPointer<UInt8>) -> Int8 {
        let trimmed = trim(bytes)
        var index = trimmed.startIndex
        var negative = false
        if index < trimmed.endIndex, trimmed[index] == UInt8(ascii: "-") || trimmed[index] == UInt8(ascii: "+") {
            negative = trimmed[index] == UInt8(ascii: "-")
            index += 1
        }
        guard index < trimmed.endIndex else { return 0 }
        var value = 0
        while index < trimmed.endIndex {
            let byte = trimmed[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return 0 }
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), 1000)
            index += 1
        }
        return Int8(clamping: negative ? -value : value)
    }

    private static func trim(_ bytes: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>> {
        var slice = bytes[...]
        while let first = slice.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D {
            slice = slice.dropFirst()
        }
        while let last = slice.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D {
            slice = slice.dropLast()
        }
        return slice
    }
}

private struct TypeOutcome: Error {
    let disposition: StanzaDisposition
    init(_ disposition: StanzaDisposition) { self.disposition = disposition }
}

/// Picks the `<status>` to show among several in different languages.
private struct StatusChoice {
    private(set) var chosen: Stanza.ElementID?
    private var rank = Int.max

    mutating func consider(_ element: Stanza.ElementID, in stanza: Stanza) {
        // 0: in the stanza's (or stream's) language; 1: no language at all; 2: any other, first one wins.
        // A status without its own xml:lang inherits the stanza's, so it ranks 0 whenever the stanza has one.
        let candidateRank: Int
        if stanza.hasLanguage(stanza.root), stanza.hasSameLanguage(element, as: stanza.root) {
            candidateRank = 0
        } else if !stanza.hasLanguage(element) {
            candidateRank = 1
        } else {
            candidateRank = 2
        }
        if candidateRank < rank {
            rank = candidateRank
            chosen = element
        }
    }
}
