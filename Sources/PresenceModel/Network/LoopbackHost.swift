/// Whether a host names this machine's loopback interface: 127.0.0.0/8, ::1 and `localhost`.
///
/// The one definition for every rule that treats loopback apart: the service's listeners (served without TLS or
/// tokens only there) and the XMPP client's TLS and PLAIN rules.
public enum LoopbackHost {
    public static func contains(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
