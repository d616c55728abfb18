import PresenceModel
import Testing

@Suite("JIDs follow RFC 7622")
struct JIDTests {
    @Test func theThreePartsAreSplitAtTheFirstSlashAndTheFirstAt() throws {
        let jid = try JID("alice@example.com/desk/with@signs")
        #expect(jid.bare.rawValue == "alice@example.com")
        #expect(jid.bare.localpart == "alice")
        #expect(jid.bare.domainpart == "example.com")
        #expect(jid.resource == "desk/with@signs")
        #expect(jid.description == "alice@example.com/desk/with@signs")
    }

    @Test func localpartAndDomainAreCaseInsensitiveTheResourceIsNot() throws {
        let upper = try JID("Alice@Example.COM/Desk")
        let lower = try JID("alice@example.com/Desk")
        #expect(upper.bare == lower.bare)
        #expect(upper.bare.rawValue == "alice@example.com")
        #expect(upper.resource == "Desk")
        #expect(try JID("alice@example.com/desk") != lower)
    }

    @Test func nonASCIIPartsAreLowercasedToo() throws {
        #expect(try JID("Ärger@Bücher.example").bare.rawValue == "ärger@bücher.example")
    }

    @Test func domainOnlyJIDsAndTrailingDotsAreNormalised() throws {
        #expect(try JID("example.com").bare.rawValue == "example.com")
        #expect(try JID("example.com").bare.localpart == nil)
        #expect(try JID("alice@example.com./phone").bare.rawValue == "alice@example.com")
        #expect(try JID("[::1]").bare.rawValue == "[::1]")
    }

    @Test func aDomainOfOnlyDotsOrTwoTrailingDotsIsRefusedSoThatEveryJIDPrintsAsItself() throws {
        // Found by the FuzzJID target: `..` parsed as the domain `.`, which printed as text that does not parse.
        for input in ["..", ".", "alice@..", "alice@example.com..", "alice@example.com../desk"] {
            #expect(throws: JIDError.emptyDomainpart, "\(input)") { try JID(input) }
        }
        for input in [
            "alice@example.com.", "example.com./desk", "Ünïcode@Example.COM/Désk", "d\\27artagnan@musketeers.lit",
        ] {
            let jid = try JID(input)
            #expect(try JID(jid.description) == jid, "\(input) → \(jid)")
        }
    }

    @Test(arguments: [
        ("", JIDError.empty),
        ("@example.com", .emptyLocalpart),
        ("alice@", .emptyDomainpart),
        ("alice@/desk", .emptyDomainpart),
        ("/desk", .emptyDomainpart),
        ("alice@example.com/", .emptyResourcepart),
        ("al ice@example.com", .forbiddenCharacterInLocalpart),
        ("al\"ice@example.com", .forbiddenCharacterInLocalpart),
        ("al&ice@example.com", .forbiddenCharacterInLocalpart),
        ("al'ice@example.com", .forbiddenCharacterInLocalpart),
        ("al:ice@example.com", .forbiddenCharacterInLocalpart),
        ("al<ice@example.com", .forbiddenCharacterInLocalpart),
        ("al>ice@example.com", .forbiddenCharacterInLocalpart),
        ("al\u{7}ice@example.com", .forbiddenCharacterInLocalpart),
        ("alice@exa mple.com", .forbiddenCharacterInDomainpart),
        ("alice@b@example.com", .forbiddenCharacterInDomainpart),
        ("alice@example.com/\u{1}", .forbiddenCharacterInResourcepart),
    ])
    func invalidJIDsAreRefusedWithTheirReason(input: String, error: JIDError) {
        #expect(throws: error) { try JID(input) }
    }

    @Test func eachPartMayHaveAtMost1023Bytes() throws {
        let part = String(repeating: "a", count: 1023)
        let jid = try JID("\(part)@\(part)/\(part)")
        #expect(jid.resource?.utf8.count == 1023)
        #expect(throws: JIDError.localpartTooLong) { try JID("\(part)a@example.com") }
        #expect(throws: JIDError.domainpartTooLong) { try JID("alice@\(part)a") }
        #expect(throws: JIDError.resourcepartTooLong) { try JID("alice@example.com/\(part)a") }
        // Bytes, not characters: 512 two-byte characters are 1024 bytes.
        #expect(throws: JIDError.localpartTooLong) { try JID(String(repeating: "é", count: 512) + "@example.com") }
    }

    @Test func spacesAreAllowedInTheResource() throws {
        #expect(try JID("alice@example.com/Alice's phone").resource == "Alice's phone")
    }

    @Test func aBareJIDRefusesAResource() {
        #expect(throws: JIDError.unexpectedResource) { try BareJID("alice@example.com/desk") }
        #expect((try? BareJID("ALICE@example.com"))?.rawValue == "alice@example.com")
    }
}
