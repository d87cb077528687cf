import Foundation
import IsthmusConfig
import TestSupport
import Testing

/// `isthmus link --matrix-moderators`: the opt-in is an accepted flag and shows in the help.
@Suite struct LinkModeratorOptInTests {
    @Test func theFlagIsListedInTheHelp() async {
        let result = await isthmus("link", "--help")
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: isthmus link [--config <file>] [--matrix-moderators] [--sync-name] <matrix-room> <muc-jid>\n"))
        #expect(result.stdout.contains("""
              --matrix-moderators     Give Matrix users with power level 50 or more the MUC
                                      moderator role (never an affiliation).

            """))
        // `--sync-name` (the MUC's name copied to the Matrix room) is listed too.
        #expect(result.stdout.contains("""
              --sync-name             Copy the MUC's name to the Matrix room's name
                                      (default: the Matrix room keeps its own).

            """))
    }
}
