import ServiceLifecycle

/// Tells systemd `STOPPING=1` when a graceful shutdown begins, so `systemctl status` says the service is
/// stopping while feeders drain and change streams end.
struct SystemdStoppingService: Service {
    let systemd: SystemdNotifier

    func run() async throws {
        try? await gracefulShutdown()
        systemd.notify("STOPPING=1\nSTATUS=stopping: draining feeders and ending change streams")
    }
}
