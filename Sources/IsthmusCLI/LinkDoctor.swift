import IsthmusCommon
import IsthmusStore

/// The links part of `isthmus doctor`. Pure: findings from the stored links.
enum LinkDoctor {
    /// One `warn` finding per link whose MUC keeps no archive with stanza-ids (as `serve` last found it): messages
    /// sent there while the bridge is down are not caught up, and how to fix that. Links not checked yet say nothing.
    static func findings(_ links: [RoomLink]) -> [DoctorFinding] {
        links.filter { $0.archive == false && !$0.unlinking }.map { link in
            DoctorFinding(
                ok: true, check: "Archive of \(link.muc)",
                detail: "the MUC keeps no archive with stanza-ids: messages sent there while the bridge is down cannot be "
                    + "caught up (linked with \(link.matrixRoom)). Fix: turn archiving on for the room (Prosody: load "
                    + "muc_mam and set the room's \"Enable archiving\" option, muc#roomconfig_enablearchiving; ejabberd: "
                    + "mod_mam and the room's mam option); serve notices at its next start or rejoin",
                warning: true)
        }
    }
}
