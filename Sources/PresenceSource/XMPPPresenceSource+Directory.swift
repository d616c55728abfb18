import Logging
import PresenceModel

/// The server's session directory asked about every silent member at once (``SessionDirectory``).
extension XMPPPresenceSource {
    /// Asks the directory each time members wait for it (`whenDue` says so), one question at a time, until the
    /// session ends or the directory fails: its members, and every later one, are then asked last activity.
    func askSessionDirectory(_ directory: any SessionDirectory, whenDue: AsyncStream<Void>) async {
        for await _ in whenDue {
            while confirmations.takeDirectoryQuestion() {
                let started = ContinuousClock.now
                do {
                    let sessions = try await directory.accountsWithSession()
                    confirmations.directoryAnswered(sessions)
                    state.withLock { $0.sessionDirectoryAnswers += 1 }
                    logger.debug(
                        "the session directory answered",
                        metadata: [
                            "directory": "\(directory)", "sessions": "\(sessions.count)",
                            "took": "\(ContinuousClock.now - started)",
                        ])
                    settleCertainAnswers()
                } catch {
                    guard !Task.isCancelled else { return }
                    confirmations.directoryFailed()
                    state.withLock { $0.sessionDirectoryError = "\(error)" }
                    logger.error(
                        """
                        the server's session directory did not answer; until the next login, members are asked \
                        one by one (XEP-0012 last activity), which can take minutes with a shared roster group of \
                        everyone
                        """,
                        metadata: ["directory": "\(directory)", "error": "\(error)"])
                    return
                }
            }
        }
    }
}
