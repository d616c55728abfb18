/// The people page the service serves at `/`: a searchable list of everyone with live status dots, status text
/// and attendance, grouped by domain (or the department a JID's domain names), fed by the change stream; and a
/// storage panel. Three static files (`people.html`, `people.js`, `people.css` beside this one) compiled into the
/// binary: no CDN, no build step, nothing to install.
extension CompiledFile {
    static let peoplePage = CompiledFile(PackageResources.people_html, "text/html; charset=utf-8")
    static let peopleScript = CompiledFile(PackageResources.people_js, "text/javascript; charset=utf-8")
    static let peopleStyle = CompiledFile(PackageResources.people_css, "text/css; charset=utf-8")
}
