import Testing

@testable import XMPPClient

@Suite("SCRAM logins compute what RFC 5802 and RFC 7677 say, and refuse what a server must not do")
struct SCRAMClientTests {
    @Test func theRFC5802ExampleLogsInWithSHA1() throws {
        var client = try SCRAMClient(
            mechanism: .sha1, username: "user", password: "pencil", nonce: "fyko+d2lbbFgONRv9qkxdawL")
        #expect(client.initialMessage == "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")
        let final = try client.respond(to: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
        #expect(final == "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=")
        try client.verify(serverFinal: "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=")
    }

    @Test func theRFC7677ExampleLogsInWithSHA256() throws {
        var client = try SCRAMClient(
            mechanism: .sha256, username: "user", password: "pencil", nonce: "rOprNGfwEbeRWgbNEkqO")
        let final = try client.respond(
            to: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
        #expect(
            final
                == "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        )
        try client.verify(serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    }

    @Test func aServerThatDoesNotKnowThePasswordIsCaught() throws {
        var client = try SCRAMClient(
            mechanism: .sha1, username: "user", password: "pencil", nonce: "fyko+d2lbbFgONRv9qkxdawL")
        _ = try client.respond(to: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
        #expect(throws: SCRAMError.serverSignatureMismatch) {
            try client.verify(serverFinal: "v=AAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        }
        #expect(throws: SCRAMError.serverError("invalid-proof")) { try client.verify(serverFinal: "e=invalid-proof") }
    }

    @Test func aServerMustExtendTheNonceAndAskForEnoughIterations() throws {
        var client = try SCRAMClient(mechanism: .sha256, username: "user", password: "pencil", nonce: "abc")
        #expect(throws: SCRAMError.self) { try client.respond(to: "r=xyz123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096") }
        #expect(throws: SCRAMError.tooFewIterations(1)) {
            try client.respond(to: "r=abc123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1")
        }
        #expect(throws: SCRAMError.self) { try client.respond(to: "r=abc123,i=4096") }
        #expect(throws: SCRAMError.self) {
            try client.verify(serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
        }
    }

    @Test func usernamesAreEscapedAndNoncesAreFresh() throws {
        let client = try SCRAMClient(mechanism: .sha1, username: "a,b=c", password: "p")
        #expect(client.initialMessage.hasPrefix("n,,n=a=2Cb=3Dc,r="))
        let other = try SCRAMClient(mechanism: .sha1, username: "a,b=c", password: "p")
        #expect(client.initialMessage != other.initialMessage)
    }

    @Test(arguments: [
        ("I\u{00AD}X", "IX"),  // soft hyphen: mapped to nothing
        ("user", "user"),
        ("USER", "USER"),  // case is kept
        ("\u{00AA}", "a"),  // NFKC
        ("\u{2168}", "IX"),  // NFKC
        ("pass\u{00A0}word", "pass word"),  // a non-ASCII space is a space
    ])
    func passwordsArePreparedAsRFC4013Shows(input: String, prepared: String) throws {
        #expect(try SASLPrep.prepare(input, what: "password") == prepared)
    }

    @Test func prohibitedCharactersAreRefused() {
        #expect(throws: SCRAMError.prohibitedCharacter(what: "password")) {
            try SASLPrep.prepare("\u{0007}", what: "password")
        }
        #expect(throws: SCRAMError.prohibitedCharacter(what: "password")) {
            try SASLPrep.prepare("a\u{E000}", what: "password")
        }
        #expect(throws: SCRAMError.self) { try SCRAMClient(mechanism: .sha1, username: "user", password: "") }
    }
}
