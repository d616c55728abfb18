extension PeoplePage {
    /// `/`: the page's structure. Everything it needs is served by this service; nothing comes from a CDN.
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>People · PresenceStore</title>
        <link rel="stylesheet" href="/people.css">
        </head>
        <body>
        <header>
          <h1>People</h1>
          <input id="search" type="search" placeholder="Search by name, address or status" autocomplete="off" autofocus>
          <span id="summary" aria-live="polite">connecting…</span>
          <span id="connection" class="connection">●</span>
        </header>
        <main>
          <section id="people" aria-label="People">
            <div id="viewport"><div id="spacer"></div><div id="rows"></div></div>
            <p id="empty" hidden>Nobody matches.</p>
          </section>
          <aside id="storage" aria-label="Storage">
            <h2>Storage</h2>
            <dl id="storage-figures"></dl>
            <h3>Evictions by cause</h3>
            <dl id="evictions"></dl>
            <h3>Last pressure events</h3>
            <ol id="pressure-events"></ol>
            <p class="note">Stale statuses cannot be measured live (that needs the truth): see
            <code>presence compare</code>.</p>
          </aside>
        </main>
        <script src="/people.js"></script>
        </body>
        </html>
        """#
}
