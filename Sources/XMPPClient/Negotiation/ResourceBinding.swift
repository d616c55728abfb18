import Foundation
import XMPPStream

/// Resource binding (RFC 6120 §7): the request, and the full JID the server assigned.
enum ResourceBinding {
    static let requestID = "bind-1"
    static let sessionID = "session-1"

    static func request(resource: String?) -> [UInt8] {
        var writer = XMPPWriter()
        writer.iq(type: "set", id: requestID) { writer in
            writer.element("bind", namespace: StreamFeatures.bindNamespace) { writer in
                if let resource { writer.element("resource", text: resource) }
            }
        }
        return writer.bytes
    }

    /// The legacy session request (RFC 3921 §3), for servers that still require it.
    static func sessionRequest() -> [UInt8] {
        var writer = XMPPWriter()
        writer.iq(type: "set", id: sessionID) { writer in
            writer.element("session", namespace: StreamFeatures.sessionNamespace)
        }
        return writer.bytes
    }

    /// The bound full JID from the server's answer.
    static func boundJID(from answer: Stanza) throws(XMPPClientError) -> String {
        guard let iq = IQ(answer), iq.id == requestID else {
            throw .protocolViolation("expected the answer to the bind request")
        }
        guard iq.kind == .result else { throw .bindFailed(condition: IQ.errorCondition(of: answer) ?? "unknown") }
        guard let bind = answer.firstChild(of: answer.root, named: "bind", in: StreamFeatures.bindNamespace),
            let jid = answer.firstChild(of: bind, named: "jid", in: StreamFeatures.bindNamespace)
        else { throw .protocolViolation("the bind result has no <jid>") }
        return answer.text(of: jid).trimmingCharacters(in: .whitespaces)
    }
}
