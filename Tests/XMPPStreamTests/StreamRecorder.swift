import XMPPStream

/// Feeds inputs to a parser and records what it reports, in the order a consumer would see it.
struct StreamRecorder {
    var parser: XMPPStreamParser
    var headers: [StreamHeader] = []
    var stanzas: [Stanza] = []
    var closed = 0
    var error: XMPPStreamError?

    init(limits: XMPPStreamLimits = XMPPStreamLimits()) {
        parser = XMPPStreamParser(configuration: .init(limits: limits))
    }

    mutating func feed(_ text: String) { feed(Array(text.utf8)) }

    mutating func feed(_ bytes: [UInt8]) {
        do throws(XMPPStreamError) {
            try parser.feed(bytes) { record($0) }
        } catch {
            self.error = error
        }
    }

    mutating func finish() {
        do throws(XMPPStreamError) {
            try parser.finish { record($0) }
        } catch {
            self.error = error
        }
    }

    private mutating func record(_ event: XMPPStreamEvent) {
        switch event {
        case .streamOpened(let header): headers.append(header)
        case .stanza(let stanza): stanzas.append(stanza)
        case .streamClosed: closed += 1
        }
    }

    /// Root local name and `id` of every stanza, for comparing runs.
    var summary: [String] {
        stanzas.map { "\($0.localName(of: $0.root)):\($0.attribute("id", of: $0.root) ?? "-")" }
    }

    /// Feeds `input` whole, then finishes.
    static func parse(_ input: String, limits: XMPPStreamLimits = XMPPStreamLimits()) -> StreamRecorder {
        var recorder = StreamRecorder(limits: limits)
        recorder.feed(input)
        if recorder.error == nil { recorder.finish() }
        return recorder
    }
}

let streamHeader =
    "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='example.com' version='1.0' xml:lang='en'>"
