import Foundation

/// An OpenLDAP directory of its own (`slapd` from Debian, its configuration and MDB database in a temporary
/// directory, listening on a loopback port), as an organisation keeps its staff: each person under `ou=people`
/// (`uid=…`, `inetOrgPerson`) and one `posixGroup` under `ou=groups` listing its members by `memberUid`. ejabberd's
/// `mod_shared_roster_ldap` then makes the group a shared roster group everyone in it sees
/// (``ejabberdConfiguration``). Used by the tests and, through a link, by the benchmarks.
package final class OpenLDAPDirectory: Sendable {
    package static let base = "dc=corp,dc=test"
    package static let administrator = "cn=admin,dc=corp,dc=test"
    /// The directory's own administrator password: it exists only in the directory's temporary configuration.
    package static let administratorPassword = "directory-secret"

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package let port: Int
    private let directory: URL
    private let process: Process

    /// A directory on `port` with `people` and the group `group` listing `members`, loaded before it starts.
    package init(port: Int, people: [String], group: String, members: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/slapd"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/ldapsearch")
        else {
            throw Failure(description: "slapd is not installed (apt-get install slapd ldap-utils; .ci/run does)")
        }
        self.port = port
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ldap-\(UUID().uuidString)")
        let data = directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let configuration = directory.appendingPathComponent("slapd.conf")
        try """
        include /etc/ldap/schema/core.schema
        include /etc/ldap/schema/cosine.schema
        include /etc/ldap/schema/nis.schema
        include /etc/ldap/schema/inetorgperson.schema
        pidfile \(directory.path)/slapd.pid
        modulepath /usr/lib/ldap
        moduleload back_mdb
        database mdb
        maxsize 1073741824
        suffix "\(Self.base)"
        rootdn "\(Self.administrator)"
        rootpw \(Self.administratorPassword)
        directory \(data.path)
        index objectClass eq
        index uid eq
        index cn eq
        index memberUid eq
        """.write(to: configuration, atomically: false, encoding: .utf8)
        var ldif = """
            dn: \(Self.base)
            objectClass: dcObject
            objectClass: organization
            dc: corp
            o: Corp

            dn: ou=people,\(Self.base)
            objectClass: organizationalUnit
            ou: people

            dn: ou=groups,\(Self.base)
            objectClass: organizationalUnit
            ou: groups


            """
        for person in people {
            ldif += "dn: uid=\(person),ou=people,\(Self.base)\nobjectClass: inetOrgPerson\nuid: \(person)\n"
            ldif += "cn: \(person)\nsn: \(person)\n\n"
        }
        ldif += "dn: cn=\(group),ou=groups,\(Self.base)\nobjectClass: posixGroup\ncn: \(group)\ngidNumber: 1000\n"
        for member in members { ldif += "memberUid: \(member)\n" }
        let file = directory.appendingPathComponent("people.ldif")
        try ldif.write(to: file, atomically: false, encoding: .utf8)
        // Loaded offline before the server starts: ldapadd of tens of thousands of entries takes minutes.
        try Self.run("/usr/sbin/slapadd", ["-q", "-f", configuration.path, "-l", file.path])
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/slapd")
        // `-d 0`: in the foreground, so the process is ours to stop.
        process.arguments = ["-f", configuration.path, "-h", "ldap://127.0.0.1:\(port)/", "-d", "0"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + TestDeadline.serverReady
        while (try? Self.run(
            "/usr/bin/ldapsearch",
            ["-x", "-H", "ldap://127.0.0.1:\(port)/", "-b", Self.base, "-s", "base", "(objectClass=*)"])) == nil
        {
            guard ContinuousClock.now < deadline, process.isRunning else {
                stop()
                throw Failure(description: "slapd did not answer on 127.0.0.1:\(port)")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// `mod_shared_roster_ldap`'s options besides its base, as the Deploying guide has them: which groups are
    /// rosters, and how a group names its members and a member their name.
    package static let rosterOptions = [
        ("ldap_rfilter", "(objectClass=posixGroup)"), ("ldap_groupattr", "cn"), ("ldap_groupdesc", "cn"),
        ("ldap_memberattr", "memberUid"), ("ldap_ufilter", "(&(objectClass=inetOrgPerson)(uid=%u))"),
        ("ldap_useruid", "uid"), ("ldap_userdesc", "cn"),
    ]

    /// The options as the guide's YAML writes them, one `key: "value"` a line.
    package static func optionsForTheGuide() -> [String] {
        rosterOptions.map { "\($0.0): \"\($0.1)\"" }
    }

    /// ejabberd's lines for shared rosters from this directory: the LDAP connection (top level) and
    /// `mod_shared_roster_ldap`'s options (a module's value under `modules:`).
    package func ejabberdConfiguration() -> (topLevel: String, module: String) {
        let options = [("ldap_base", "ou=groups,\(Self.base)")] + Self.rosterOptions
        return (
            """
            ldap_servers: ["127.0.0.1"]
            ldap_port: \(port)
            ldap_rootdn: "\(Self.administrator)"
            ldap_password: "\(Self.administratorPassword)"
            ldap_base: "\(Self.base)"
            """,
            "{" + options.map { "\($0.0): \"\($0.1)\"" }.joined(separator: ", ") + "}"
        )
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let status = try Tool.run(executable, arguments)
        guard status == 0 else {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) ended with \(status)")
        }
    }

    package func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
