/// The release of PresenceStore this build is: what `presence --version` prints and the service logs when it
/// starts, so an operator can tell which build answers.
public enum PresenceVersion {
    public static let current = "0.12.0"
}
