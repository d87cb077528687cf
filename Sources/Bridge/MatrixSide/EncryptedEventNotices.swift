import IsthmusCommon

/// Matrix events this bridge cannot read (end-to-end encrypted): never dropped in silence. The first encrypted event
/// of a room gets a notice, then at most one notice an hour per room (each saying how many went unbridged since the
/// last), so a busy encrypted room is not flooded; turning encryption on in a room is always answered. Shared by the
/// portals (linked rooms) and the DMs. Pure value: time is passed in; its owner posts the notices.
///
/// What was said lives in memory: after a restart the next encrypted event of a room is answered again. A notice's
/// subject (its transaction id) is derived from the event, so a replayed event never posts a second one.
struct EncryptedEventNotices: Sendable {
    /// Where the notice is read, which decides what it says.
    enum Place: Sendable {
        /// A linked room: messages do not reach the MUC.
        case linkedRoom
        /// A DM with an XMPP user's ghost: messages do not reach that person.
        case directChat
        /// A DM whose ghost decrypts (`encryption.allow`): only a message it could not decrypt is lost (its key never
        /// arrived, or it was refused), and turning encryption on changes nothing.
        case decryptingDirectChat
        /// A linked room whose ghosts decrypt (`encryption.allow`), likewise.
        case decryptingLinkedRoom
    }

    /// A notice to post in the room, as the bot (linked rooms) or the DM's ghost.
    struct Notice: Sendable, Equatable {
        var text: String
        /// Makes the notice's transaction id: one notice per event, whatever happens after a crash.
        var subject: String
        /// Encrypted events of the room not answered since the previous notice (for the log line).
        var heldBack: Int
    }

    /// At most one notice per room in this time (turning encryption on is always answered).
    static let interval = Duration.seconds(3600)
    /// Rooms remembered before those whose hour has passed are forgotten (memory stays bounded).
    static let capacity = 4096

    /// Per room: when its last notice went, and the encrypted events left unanswered since.
    private var windows: [RoomID: (noticed: ContinuousClock.Instant, heldBack: Int)] = [:]

    /// The notice `event` calls for at `now`, if any (only `m.room.encrypted` and `m.room.encryption` do). Changes
    /// nothing: ``record(_:noticed:now:)`` says what became of it.
    func notice(for event: MatrixRoomEvent, in place: Place, now: ContinuousClock.Instant) -> Notice? {
        let subject = "encrypted:" + event.eventID.rawValue
        switch event.content {
        case .encryptionEnabled:
            guard let text = Self.enabledText(place) else { return nil }
            return Notice(text: text, subject: subject, heldBack: 0)
        case .encrypted:
            if let window = windows[event.room], now - window.noticed < Self.interval { return nil }
            let heldBack = windows[event.room]?.heldBack ?? 0
            return Notice(text: Self.encryptedText(place, heldBack: heldBack), subject: subject, heldBack: heldBack)
        default:
            return nil
        }
    }

    /// Records `event` at `now`: its notice was posted (`noticed`), or it was left unanswered within the hour. A
    /// notice that could not be posted is not recorded, so the next encrypted event is answered instead.
    mutating func record(_ event: MatrixRoomEvent, noticed: Bool, now: ContinuousClock.Instant) {
        guard case .encrypted = event.content else { return }   // turning encryption on stays out of the count
        if noticed {
            if windows[event.room] == nil, windows.count >= Self.capacity {
                windows = windows.filter { now - $0.value.noticed < Self.interval }
            }
            windows[event.room] = (now, 0)
        } else if var window = windows[event.room] {
            window.heldBack += 1
            windows[event.room] = window
        }
    }

    /// ``notice(for:in:now:)`` and its record in one, for an owner that posts every notice it is given.
    mutating func take(_ event: MatrixRoomEvent, in place: Place, now: ContinuousClock.Instant) -> Notice? {
        let notice = notice(for: event, in: place, now: now)
        record(event, noticed: notice != nil, now: now)
        return notice
    }

    /// What the room is told about an encrypted event (no ids of either side: RICH.md, "never leak").
    static func encryptedText(_ place: Place, heldBack: Int) -> String {
        let since = heldBack > 0 ? " \(heldBack + 1) encrypted messages were not delivered since the last notice." : ""
        let repeats = " (This notice repeats at most once an hour.)"
        switch place {
        case .linkedRoom:
            return "🔒 This bridge cannot read encrypted messages: encrypted messages sent here do not reach the XMPP room.\(since)\(repeats)"
        case .directChat:
            return "🔒 This bridge cannot read encrypted messages: encrypted messages sent here do not reach the XMPP user.\(since)\(repeats)"
        case .decryptingDirectChat:
            return "🔒 The bridge could not decrypt a message sent here, so it did not reach the XMPP user (its key never reached "
                + "the bridge, or it was not valid).\(since)\(repeats)"
        case .decryptingLinkedRoom:
            return "🔒 The bridge could not decrypt a message sent here, so it did not reach the XMPP room (its key never reached "
                + "the bridge, or it was not valid).\(since)\(repeats)"
        }
    }

    /// What the room is told when encryption is turned on (nil: nothing, it changes nothing).
    static func enabledText(_ place: Place) -> String? {
        let lost: String
        switch place {
        case .linkedRoom: lost = "nothing sent in this room reaches the XMPP room any more"
        case .directChat: lost = "nothing sent in this conversation reaches the XMPP user any more"
        case .decryptingDirectChat, .decryptingLinkedRoom: return nil
        }
        return "🔒 Encryption was turned on here. This bridge cannot read encrypted messages, so \(lost)."
    }
}
