/// The configuration the bridge submits for a room its join created (XEP-0045 §10.1): the server's defaults, except
/// that the room archives its messages when the server offers a switch for it — without an archive (XEP-0313) and
/// its stanza-ids nothing sent while the bridge is down can be caught up. Pure: no I/O.
///
/// Only a field the offered form contains is set, so a server without such a switch gets the plain instant-room
/// submission (an empty `submit` form, §10.1.2) and never an unknown field.
public enum CreatedRoomConfiguration {
    /// The boolean fields that turn a room's archive on, by server: Prosody's `mod_muc_mam`
    /// (`muc#roomconfig_enablearchiving`) and ejabberd's `mod_muc` (`mam`).
    public static let archivingFields = ["muc#roomconfig_enablearchiving", "mam"]

    /// What to submit, given the form the room offered (nil: it offered none, or asking failed).
    public static func submission(offered: DataForm?) -> DataForm {
        guard let offered, let field = offered.fields.first(where: { $0.name.map(archivingFields.contains) ?? false }),
              let name = field.name else {
            return DataForm(type: "submit")
        }
        return DataForm(type: "submit", fields: [
            DataForm.Field("FORM_TYPE", type: "hidden", values: [XMPPNamespace.mucRoomConfig]),
            DataForm.Field(name, values: ["1"]),
        ])
    }

    /// Whether `submission` turns archiving on (for the log).
    public static func enablesArchiving(_ submission: DataForm) -> Bool {
        submission.fields.contains { $0.name.map(archivingFields.contains) ?? false }
    }
}
