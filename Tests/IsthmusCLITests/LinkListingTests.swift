import IsthmusCommon
@testable import IsthmusCLI
import IsthmusStore
import Testing

/// `isthmus links`: a room without an archive says that it cannot be caught up after downtime.
@Suite struct LinkListingTests {
    let room = RoomID("!r:localhost")!
    let muc = JID("lounge@conference.localhost")!

    @Test func aRoomWithoutAnArchiveSaysSo() throws {
        let link = RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc, status: .active, archive: false)
        #expect(LinkListing.line(link) == "!r:localhost lounge@conference.localhost active [no archive: no catch-up after downtime]")
        #expect(try LinkListing.json([link]).contains(#""archive":false"#))
    }

    @Test func anArchivedOrUnknownRoomSaysNothingMore() throws {
        for archive in [true, nil] as [Bool?] {
            let link = RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc, status: .active, archive: archive)
            #expect(LinkListing.line(link) == "!r:localhost lounge@conference.localhost active")
        }
        #expect(try !LinkListing.json([RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc)]).contains("archive"))
    }

    @Test func doctorWarnsOnlyAboutLinkedRoomsKnownToKeepNoArchive() {
        let without = RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc, status: .active, archive: false)
        let with = RoomLink(matrixRoom: RoomID("!s:localhost")!, matrixAlias: nil, muc: JID("b@conference.localhost")!, archive: true)
        let unknown = RoomLink(matrixRoom: RoomID("!t:localhost")!, matrixAlias: nil, muc: JID("c@conference.localhost")!)
        let findings = LinkDoctor.findings([without, with, unknown])
        #expect(findings.count == 1)
        #expect(findings.first?.ok == true && findings.first?.warning == true)
        #expect(findings.first?.check == "Archive of lounge@conference.localhost")
        #expect(findings.first?.detail.contains("cannot be caught up") == true)
        #expect(findings.first?.detail.contains("muc#roomconfig_enablearchiving") == true)
    }

    @Test func theLinksOptInsAreShown() throws {
        let link = RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc, status: .active, archive: true,
                            matrixModeratorsToMUC: true, syncName: true)
        #expect(LinkListing.line(link) == "!r:localhost lounge@conference.localhost active {sync-name, matrix-moderators}")
        let json = try LinkListing.json([link])
        #expect(json.contains(#""sync_name":true"#) && json.contains(#""matrix_moderators":true"#))
        let plain = try LinkListing.json([RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc)])
        #expect(plain.contains(#""sync_name":false"#) && plain.contains(#""matrix_moderators":false"#))
    }

    @Test func aDynamicLinkSaysSo() throws {
        let link = RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc, status: .active, syncName: true, kind: .dynamic)
        #expect(LinkListing.line(link) == "!r:localhost lounge@conference.localhost active {sync-name} [dynamic]")
        #expect(try LinkListing.json([link]).contains(#""kind":"dynamic""#))
        #expect(try LinkListing.json([RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc)]).contains(#""kind":"static""#))
    }
}
