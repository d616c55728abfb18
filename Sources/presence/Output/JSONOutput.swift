import Foundation
import PresenceWire

/// `--format json`: one document of the wire format on standard output, indented for people who look.
enum JSONOutput {
    static func print(_ document: some JSONDocument) {
        var bytes = document.jsonBytes(pretty: true)
        bytes.append(UInt8(ascii: "\n"))
        FileHandle.standardOutput.write(Data(bytes))
    }
}
